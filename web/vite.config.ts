import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web console: web/index.html and what it imports, built into dist/web
 * with hashed names under assets/ (served with a year's cache). No inline
 * script or style anywhere, so the broker's Content-Security-Policy can forbid them.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});

import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The MCP Apps widgets: one self-contained script (and its style sheet) that
 * the broker inlines into each `ui://fleetmesh/…` resource, since a widget's
 * HTML is delivered as one document with nothing to fetch.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/web/widgets', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    sourcemap: false,
    cssCodeSplit: false,
    minify: true,
    lib: {
      entry: fileURLToPath(new URL('src/widgets/widget-main.ts', import.meta.url)),
      formats: ['es'],
      fileName: () => 'widgets.js',
      cssFileName: 'widgets',
    },
  },
});

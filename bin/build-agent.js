// Bundles `fleetmesh agent` into one CommonJS file, dist/agent.cjs (or the path given), from
// the TypeScript sources: cli/agent-main.ts and what it imports, with @bufbuild/protobuf, which
// an idle agent uses. The other packages stay in node_modules, required on first use: bundled,
// their text would sit in every agent's memory whether a call ever needs them or not. Why one
// CommonJS file: docs/performance.md, the idle agent. `npm run build` and `npm run prepare` run it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The bundle's path when none is given. */
export const AGENT_BUNDLE = `${root}dist/agent.cjs`;

export async function buildAgentBundle(outfile = AGENT_BUNDLE) {
  const { build } = await import('esbuild');
  const { dependencies } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
  const external = Object.keys(dependencies)
    .filter((name) => name !== '@bufbuild/protobuf')
    .flatMap((name) => [name, `${name}/*`]);
  await build({
    entryPoints: [`${root}cli/agent-main.ts`],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external,
    minify: true,
    // The modules that find files or packages from their own place do it from the bundle's.
    define: { 'import.meta.url': '__agentBundleUrl' },
    banner: { js: "const __agentBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
    logLevel: 'warning',
  });
  return outfile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildAgentBundle(process.argv[2]);

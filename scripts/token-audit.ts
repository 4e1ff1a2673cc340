/**
 * What each tool surface's tools/list costs in a model's context: the name,
 * description and input schema of every tool (what clients pass to the model),
 * for an identity that sees the whole catalog, counted with the o200k tokenizer.
 * Writes docs/tokens.json; `--check` fails when a figure drifts more than 15%
 * from the committed one.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { SURFACE_NAMES } from '../broker/mcp/surfaces/surface.ts';
import { SURFACES } from '../broker/mcp/surfaces/surfaces.ts';
import { CATALOG } from '../shared/catalog/catalog.ts';

const TOLERANCE = 0.15;

function measure(): Record<string, { tools: number; bytes: number; tokens: number }> {
  const figures: Record<string, { tools: number; bytes: number; tokens: number }> = {};
  for (const name of SURFACE_NAMES) {
    const tools = SURFACES[name].tools(CATALOG).map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));
    const text = JSON.stringify(tools);
    figures[name] = { tools: tools.length, bytes: Buffer.byteLength(text), tokens: encode(text).length };
  }
  return figures;
}

const target = fileURLToPath(new URL('../docs/tokens.json', import.meta.url));
const figures = measure();
const document = { tokenizer: 'o200k_base', actions: CATALOG.length, surfaces: figures };
if (process.argv.includes('--check')) {
  const committed = JSON.parse(readFileSync(target, 'utf8')) as typeof document;
  const drifted = Object.entries(figures).filter(([name, figure]) => {
    const before = committed.surfaces[name]?.tokens ?? 0;
    return before === 0 || Math.abs(figure.tokens - before) / before > TOLERANCE;
  });
  for (const [name, figure] of Object.entries(figures)) {
    process.stdout.write(
      `${name.padEnd(10)} ${String(figure.tools).padStart(4)} tools  ${String(figure.tokens).padStart(7)} tokens (committed ${committed.surfaces[name]?.tokens ?? '-'})\n`,
    );
  }
  if (drifted.length) {
    process.stderr.write(
      `token figures drifted more than ${TOLERANCE * 100}% for ${drifted.map(([n]) => n).join(', ')}: run npm run audit:tokens and commit docs/tokens.json.\n`,
    );
    process.exit(1);
  }
} else {
  writeFileSync(target, `${JSON.stringify(document, null, 2)}\n`);
  for (const [name, figure] of Object.entries(figures))
    process.stdout.write(`${name.padEnd(10)} ${String(figure.tools).padStart(4)} tools  ${String(figure.tokens).padStart(7)} tokens\n`);
}

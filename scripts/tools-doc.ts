/**
 * Writes docs/tools.md from the catalog: a table per domain (tool, risk,
 * level, arguments). `--check` fails when the committed file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { IconLinks } from '../broker/mcp/icons/icon-links.ts';
import { SURFACES } from '../broker/mcp/surfaces/surfaces.ts';
import { requiredParameters, toolInputSchema } from '../broker/mcp/surfaces/tool-schemas.ts';
import { type Action, domainOf } from '../shared/catalog/action.ts';
import { CATALOG, domains } from '../shared/catalog/catalog.ts';

const LEVELS = ['0 read-only', '1 operational', '2 configuration', '3 impactful'];

function argumentsOf(action: Action): string {
  const properties = Object.keys((toolInputSchema(action).properties ?? {}) as Record<string, unknown>);
  const required = new Set(requiredParameters(action));
  return properties.map((name) => (required.has(name) ? `**${name}**` : name)).join(', ') || '-';
}

function renderToolsDoc(): string {
  const lines = [
    '# Tools',
    '',
    "Generated from the domains' action declarations (`shared/domains/`) by `npm run docs`; CI fails when this file is stale.",
    'Every action is reachable on every tool surface (`--tool-surface`): as its own tool (`individual`, the names below),',
    `through its domain's tool (\`meta\`: ${domains()
      .map((d) => `\`${d}\``)
      .join(', ')}), or through \`find_action\` / \`execute_action\` (\`dynamic\`).`,
    'Required arguments are in bold. Host actions also take `host` (alias `server`), `hosts`, `selector` and `timeout_ms`;',
    "destructive ones need `confirm: true`. Levels: 0 read-only, 1 operational, 2 configuration, 3 impactful; the broker's",
    '`--operations-level` (default 1) caps every identity.',
    '',
  ];
  for (const domain of domains()) {
    lines.push(`## ${domain}`, '', '| tool | id | risk | level | runs on | arguments | what it does |', '| --- | --- | --- | --- | --- | --- | --- |');
    for (const action of CATALOG.filter((a) => domainOf(a) === domain)) {
      const sentences = action.description.split(/(?<=\.) /);
      let summary = '';
      for (const sentence of sentences) {
        summary = summary ? `${summary} ${sentence}` : sentence;
        if (summary.length >= 40) break;
      }
      summary = summary.replace(/\.$/, '');
      lines.push(
        `| \`${action.tool}\` | \`${action.id}\` | ${action.risk} | ${LEVELS[action.level]} | ${action.runsOn} | ${argumentsOf(action)} | ${summary.replaceAll('|', '\\|')}. |`,
      );
    }
    lines.push('');
  }
  lines.push(`${CATALOG.length} actions; the \`meta\` surface has ${SURFACES.meta.tools(CATALOG, new IconLinks(undefined)).length} tools, \`dynamic\` 2.`, '');
  return lines.join('\n');
}

const target = fileURLToPath(new URL('../docs/tools.md', import.meta.url));
const text = renderToolsDoc();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (current !== text) {
    process.stderr.write('docs/tools.md is stale: run npm run docs and commit it.\n');
    process.exit(1);
  }
  process.stdout.write('docs/tools.md is current.\n');
} else {
  writeFileSync(target, text);
  process.stdout.write(`wrote docs/tools.md (${CATALOG.length} actions)\n`);
}

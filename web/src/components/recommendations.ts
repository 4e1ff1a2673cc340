import { h, replace } from '../dom.ts';

/** get_recommendations' answer. */
export interface RecommendationsAnswer {
  findings: {
    severity: 'info' | 'warning' | 'critical';
    category: string;
    target: { type: string; id: string; name: string; cluster?: string };
    rationale: string;
    fix?: { tool: string; section?: string };
  }[];
  totals: { info: number; warning: number; critical: number };
}

const ORDER = { critical: 0, warning: 1, info: 2 } as const;

type Finding = RecommendationsAnswer['findings'][number];

/** What a finding asks for, as a request to the assistant: the target, why, and the tool that fixes it. */
export function fixRequest(f: Finding): string {
  const where = f.target.cluster ? ` in cluster ${f.target.cluster}` : '';
  const tool = f.fix ? ` Use ${f.fix.tool}${f.fix.section ? ` (section ${f.fix.section})` : ''} on ${f.target.type} ${f.target.name} (id ${f.target.id}).` : '';
  return `Fix the ${f.severity} ${f.category} finding on ${f.target.type} ${f.target.name}${where}: ${f.rationale}${tool}`;
}

/**
 * What to fix, worst first: each finding with its target, why, and the tool
 * (and section) that fixes it; with `onChoose`, each finding that names its
 * fix has a button that hands it on (a widget sends it to the conversation).
 */
export class Recommendations {
  readonly element = h('section', { class: 'recommendations' });

  constructor(private readonly onChoose?: (finding: Finding, button: HTMLButtonElement) => void) {}

  update(answer: RecommendationsAnswer): void {
    const findings = [...answer.findings].sort((a, b) => ORDER[a.severity] - ORDER[b.severity]);
    replace(
      this.element,
      h(
        'p',
        { class: 'totals' },
        h('span', { class: 'status status-critical' }, `${answer.totals.critical} critical`),
        ' ',
        h('span', { class: 'status status-warning' }, `${answer.totals.warning} warning`),
        ' ',
        h('span', { class: 'status status-info' }, `${answer.totals.info} info`),
      ),
      findings.length === 0
        ? h('p', { class: 'empty' }, 'Nothing to fix.')
        : h(
            'ul',
            { class: 'findings' },
            ...findings.map((f) =>
              h(
                'li',
                { class: `finding severity-${f.severity}`, 'data-severity': f.severity },
                h('span', { class: `status status-${f.severity}` }, f.severity),
                ' ',
                h('strong', {}, `${f.target.type} ${f.target.name}`),
                ` · ${f.category}`,
                h('p', {}, f.rationale),
                f.fix ? h('p', { class: 'fix' }, 'Fix with ', h('code', {}, f.fix.section ? `${f.fix.tool} (section ${f.fix.section})` : f.fix.tool)) : null,
                this.onChoose && f.fix ? this.chooser(f) : null,
              ),
            ),
          ),
    );
  }

  private chooser(f: Finding): HTMLButtonElement {
    const button = h('button', { type: 'button', class: 'choose-fix' }, 'Ask to fix this');
    button.addEventListener('click', () => this.onChoose?.(f, button));
    return button;
  }
}

import { getRecommendations } from '../../../shared/domains/fleet/index-actions.ts';
import { defineBrokerAction } from '../../calls/broker-action.ts';
import type { Finding, FindingSeverity } from '../broker-domain.ts';

const SEVERITY_RANK: Record<FindingSeverity, number> = { info: 0, warning: 1, critical: 2 };

/** get_recommendations: what every domain finds to fix among what the caller may read, most severe first. */
export const recommendationsHandler = defineBrokerAction({
  action: getRecommendations,
  async run(params, context) {
    const minimum = SEVERITY_RANK[params.severity ?? 'info'];
    const now = Date.now();
    const all: Finding[] = [];
    for (const broker of context.index.domains) if (broker.findings) all.push(...(await broker.findings(context, now)));
    all.sort(
      (a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || a.target.name.localeCompare(b.target.name) || a.category.localeCompare(b.category),
    );
    const findings = all.filter((f) => SEVERITY_RANK[f.severity] >= minimum);
    const totals = { info: 0, warning: 0, critical: 0 };
    for (const finding of all) totals[finding.severity] += 1;
    return { findings, totals };
  },
});

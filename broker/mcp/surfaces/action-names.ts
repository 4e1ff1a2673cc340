import type { Action } from '../../../shared/catalog/action.ts';
import { closestNames } from '../../../shared/format/closest-names.ts';

/** An action by any name a surface gives it: its id (`domain.verb`), its tool, or its id with `_` for the dot (`domain_verb`). */
export function actionByAnyName(name: string, visible: readonly Action[]): Action | undefined {
  const trimmed = name.trim();
  return visible.find((a) => a.id === trimmed || a.tool === trimmed || a.id.replace('.', '_') === trimmed);
}

export function closestActionIds(name: string, visible: readonly Action[]): string[] {
  const byId = closestNames(
    name,
    visible.map((a) => a.id),
  );
  const byTool = closestNames(
    name,
    visible.map((a) => a.tool),
  ).map((tool) => visible.find((a) => a.tool === tool)?.id ?? tool);
  return [...new Set([...byId, ...byTool])].slice(0, 5);
}

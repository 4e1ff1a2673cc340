import type { Action } from '../../../shared/catalog/action.ts';
import { closestNames } from '../../../shared/format/closest-names.ts';

/** An action by any name a surface gives it: its id (`docker.logs`), its tool (`docker_logs`), or `docker_logs` spelt as an id. */
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

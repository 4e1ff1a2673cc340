import type { NodeRecord } from '../../engine/records.ts';

/**
 * Placement constraints evaluated the way Swarm enforces them: `node.id`,
 * `node.hostname`, `node.role`, `node.platform.os`, `node.platform.arch`,
 * `node.labels.KEY` and `engine.labels.KEY`, with == or !=. A label a node lacks
 * never equals anything.
 */
function constraintHolds(constraint: string, node: NodeRecord): boolean {
  const match = /^\s*([\w.-]+)\s*(==|!=)\s*(.*?)\s*$/.exec(constraint);
  if (!match) return false;
  const [, key = '', op, wanted = ''] = match;
  let actual: string | undefined;
  if (key === 'node.id') actual = node.id;
  else if (key === 'node.hostname') actual = node.hostname;
  else if (key === 'node.role') actual = node.role;
  else if (key === 'node.platform.os') actual = node.os;
  else if (key === 'node.platform.arch') actual = node.arch;
  else if (key.startsWith('node.labels.')) actual = node.labels[key.slice('node.labels.'.length)];
  else if (key.startsWith('engine.labels.')) actual = node.engine_labels[key.slice('engine.labels.'.length)];
  const equal = actual !== undefined && actual.toLowerCase() === wanted.toLowerCase();
  return op === '==' ? equal : !equal;
}

/** The first constraint a node fails, or undefined when it may run the service. */
export function blockingConstraint(constraints: readonly string[], node: NodeRecord): string | undefined {
  return constraints.find((c) => !constraintHolds(c, node));
}

/** Whether a node takes new tasks at all. */
export function schedulable(node: NodeRecord): boolean {
  return node.state === 'ready' && node.availability === 'active';
}

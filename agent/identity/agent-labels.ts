import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../shared/pki/key-files.ts';

const LABELS_FILE = 'labels.json';

/** A merge patch of labels: a string sets, null removes. */
type LabelPatch = Record<string, string | null>;

function applyLabelPatch(labels: Record<string, string>, patch: LabelPatch): Record<string, string> {
  const result = { ...labels };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = value;
  }
  return result;
}

/**
 * Labels set through set_agent_labels, kept in the data dir as a patch over the
 * configured ones, so they survive restarts and a later --labels still applies.
 */
export class AgentLabels {
  private patch: LabelPatch;

  constructor(
    private readonly dataDir: string,
    private readonly configured: Record<string, string>,
  ) {
    const file = join(dataDir, LABELS_FILE);
    this.patch = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as LabelPatch) : {};
  }

  current(): Record<string, string> {
    return applyLabelPatch(this.configured, this.patch);
  }

  update(patch: LabelPatch): Record<string, string> {
    this.patch = { ...this.patch, ...patch };
    writeFileAtomic(join(this.dataDir, LABELS_FILE), `${JSON.stringify(this.patch, null, 2)}\n`);
    return this.current();
  }
}

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir } from '../../test/harness/temp-dir.ts';
import { MIGRATIONS } from './migrations.ts';
import { SqliteEngine } from './sqlite-engine.ts';

describe('migrating one SQLite file from several connections at once', () => {
  it('applies each migration once: a CLI command opening the store beside a starting broker finds it migrated', async () => {
    const temp = makeTempDir();
    try {
      const path = join(temp.path, 'broker.db');
      const engines = [0, 1, 2, 3].map(() => SqliteEngine.open(path, { create: true }));
      await Promise.all(engines.map((engine) => engine.migrate(MIGRATIONS)));
      for (const engine of engines) expect(await engine.schemaVersion()).toBe(MIGRATIONS.length);
      await Promise.all(engines.map((engine) => engine.close()));
    } finally {
      temp.remove();
    }
  });
});

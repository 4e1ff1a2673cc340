import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { STORE_FILE } from '../../broker/store/broker-store.ts';
import { call, identityToken, mcpClient, text } from '../harness/mcp-client.ts';
import { makeTempDir } from '../harness/temp-dir.ts';
import { startTestFleet, type TestFleet } from '../harness/test-fleet.ts';
import { waitFor } from '../harness/wait.ts';

const isRoot = process.getuid?.() === 0;

/** Fills a file system: writes to `path` until there is no space left. */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(256 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

/** The broker's data dir on a small tmpfs that the test fills up. */
describe.skipIf(!isRoot)('a broker whose disk is full', () => {
  const mount = makeTempDir('fleetmesh-full-');
  let fleet: TestFleet | undefined;

  afterEach(async () => {
    await fleet?.stop();
    fleet = undefined;
    try {
      execFileSync('umount', [mount.path]);
    } catch {
      // Not mounted.
    }
    mount.remove();
  });

  it('refuses changes with an error that says the audit cannot be written, goes on answering reads, and takes changes again once there is space', async () => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mount.path]);
    fleet = await startTestFleet({ root: mount.path, heartbeatIntervalMs: 500 });
    await fleet.addAgent('ledger');
    const spareAgent = await fleet.addAgent('spare');
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    try {
      const filler = join(mount.path, 'filler');
      // Empty the write-ahead log first, so the next write to the store needs space it cannot get.
      const checkpoint = new Database(join(fleet.broker.options.dataDir, STORE_FILE));
      checkpoint.pragma('wal_checkpoint(TRUNCATE)');
      checkpoint.close();
      fill(filler);

      const change = await call(client, 'set_agent_labels', { host: 'ledger', labels: { note: 'full' } });
      expect(change.isError).toBe(true);
      expect(text(change)).toMatch(/audit/i);
      expect(text(change)).toMatch(/disk|space|full/i);

      const read = await call(client, 'list_agents', {});
      expect(read.isError).toBeFalsy();
      expect(text(read)).toMatch(/ledger/);

      // A state change the store cannot record does not take the broker down.
      const spare = fleet.broker.registry.find('spare');
      await fleet.stopAgent(spareAgent);
      await waitFor(() => spare?.state === 'offline', { what: 'spare offline' });
      const again = await call(client, 'list_agents', {});
      expect(again.isError).toBeFalsy();

      rmSync(filler);
      const retried = await call(client, 'set_agent_labels', { host: 'ledger', labels: { note: 'space' } });
      expect(retried.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});

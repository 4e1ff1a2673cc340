import { resolve } from 'node:path';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { formatAgo, formatTable } from '../../shared/format/table.ts';
import { BROKER_DATA_DIR_FLAG, OUTPUT_FLAG } from '../../shared/options/common-flags.ts';
import { readCertificate } from '../../shared/pki/certificates.ts';
import { defineCommand } from '../command.ts';

/** Brokers of a cluster are registered on a shared store; a broker on its own registers none. */
async function openClusterStore(dataDir: string, store: string | undefined): Promise<BrokerStore> {
  const opened = await BrokerStore.open(dataDir, { create: false, store });
  if (!opened.shared) {
    await opened.close();
    throw new FleetError('invalid_argument', 'this broker is not part of a cluster: only brokers on a shared store (--store postgres://…) register', {
      hint: 'Give --store the PostgreSQL URL the brokers of the cluster share.',
    });
  }
  return opened;
}

export const brokersCommand = defineCommand({
  spec: {
    name: 'brokers',
    summary: 'List the brokers of a cluster as registered on its store: id, when started, whether stopped or removed.',
    usage: 'fleetmesh brokers --store postgres://… [--output text|json]',
    details:
      'Every broker registers its bus keys on the store when it starts; the others believe bus messages only from brokers registered here and not removed.',
    flags: { ...BROKER_DATA_DIR_FLAG, ...OUTPUT_FLAG },
  },
  async run(parsed, io) {
    const store = await openClusterStore(resolve(parsed.values['data-dir']), parsed.values.store);
    try {
      const now = Date.now();
      const brokers = (await store.brokers.list()).map((row) => ({
        broker_id: row.brokerId,
        state:
          row.removedAt !== null ? 'removed' : row.stoppedAt !== null ? 'stopped' : row.certificatePem === null ? 'waiting for a certificate' : 'registered',
        started_at_unix_ms: row.startedAt,
        stopped_at_unix_ms: row.stoppedAt,
        removed_at_unix_ms: row.removedAt,
        certificate_not_after_unix_ms: row.certificatePem === null ? null : readCertificate(row.certificatePem).notAfter.getTime(),
      }));
      if (parsed.values.output === 'json') {
        io.stdout(`${JSON.stringify({ brokers }, null, 2)}\n`);
        return 0;
      }
      if (brokers.length === 0) {
        io.stdout('No broker has registered on this store yet.\n');
        return 0;
      }
      const rows = brokers.map((b) => [
        b.broker_id,
        b.state,
        formatAgo(b.started_at_unix_ms, now),
        b.stopped_at_unix_ms ? formatAgo(b.stopped_at_unix_ms, now) : '-',
      ]);
      io.stdout(`${formatTable(['BROKER', 'STATE', 'STARTED', 'STOPPED'], rows)}\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
});

export const brokersRemoveCommand = defineCommand({
  spec: {
    name: 'brokers remove',
    summary: 'Remove a broker from a cluster: the others drop its bus messages from now on, and its id cannot register again.',
    usage: 'fleetmesh brokers remove BROKER_ID --store postgres://…',
    positionals: [{ name: 'BROKER_ID', description: 'the broker id (fleetmesh brokers lists them)', required: true }],
    flags: { ...BROKER_DATA_DIR_FLAG },
  },
  async run(parsed, io) {
    const brokerId = parsed.positionals[0] ?? '';
    const store = await openClusterStore(resolve(parsed.values['data-dir']), parsed.values.store);
    try {
      if (!(await store.brokers.remove(brokerId, Date.now()))) {
        throw new FleetError('not_found', `no broker ${JSON.stringify(brokerId)} is registered on this store, or it was removed already`, {
          hint: 'fleetmesh brokers lists the registered brokers.',
        });
      }
      io.stdout(
        `removed broker ${brokerId}: the other brokers drop its bus messages within seconds, and a broker started with that id is refused.\n` +
          'Stop its process too; its agents reconnect to the others.\n',
      );
      return 0;
    } finally {
      await store.close();
    }
  },
});

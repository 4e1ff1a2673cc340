import { resolve } from 'node:path';
import { agentsByCa, type RotationStep, rotateCa } from '../../broker/admin/ca-rotation.ts';
import type { CaSet } from '../../broker/pki/ca-set.ts';
import { readCaSet } from '../../broker/pki/fleet-authority.ts';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { formatTable } from '../../shared/format/table.ts';
import { BROKER_DATA_DIR_FLAG, OUTPUT_FLAG } from '../../shared/options/common-flags.ts';
import { readSecretFile } from '../../shared/options/secret-file.ts';
import { defineCommand } from '../command.ts';

const STEPS: readonly RotationStep[] = ['init', 'update-clients', 'update-servers', 'standby', 'rollback'];

/** What each phase does, and the command that comes next. */
const PHASE_TEXT: Record<CaSet['phase'], { means: string; next: string }> = {
  standby: { means: 'one CA signs and is trusted', next: 'fleetmesh ca rotate init starts a rotation' },
  init: { means: 'the next CA exists and is trusted beside the active one; agents are told to trust both', next: 'fleetmesh ca rotate update-clients' },
  'update-clients': {
    means: 'agents re-issue their certificates under the next CA over their streams',
    next: 'fleetmesh ca rotate update-servers, once every agent is on the next CA',
  },
  'update-servers': { means: 'brokers serve certificates of the next CA', next: 'fleetmesh ca rotate standby retires the old CA' },
  rollback: {
    means: 'brokers serve and sign from the active CA again; agents on the next CA re-issue under it',
    next: 'fleetmesh ca rotate standby drops the next CA, once every agent is back',
  },
};

async function openStore(values: { 'data-dir': string; store: string | undefined }): Promise<{ store: BrokerStore; dataDir: string }> {
  const dataDir = resolve(values['data-dir']);
  return { store: await BrokerStore.open(dataDir, { create: false, store: values.store }), dataDir };
}

export const caStatusCommand = defineCommand({
  spec: {
    name: 'ca status',
    summary: "Show the fleet CAs: the rotation's phase, each CA's pin and state, and which agents hold certificates of each.",
    usage: 'fleetmesh ca status [--output text|json]',
    details: 'Reads the broker data dir (or --store), so it works on the broker host whether or not the broker runs.',
    flags: { ...BROKER_DATA_DIR_FLAG, ...OUTPUT_FLAG },
  },
  async run(parsed, io) {
    const { store } = await openStore(parsed.values);
    try {
      const set = await readCaSet(store);
      const byCa = await agentsByCa(store, set);
      const cas = set.rows.map((row) => ({
        pin: row.pin,
        state: row.state,
        created_at_unix_ms: row.createdAt,
        retired_at_unix_ms: row.retiredAt,
        signs: row === set.signing(),
        serves_brokers: row === set.serving(),
        trusted: set.isTrusted(row.pin),
        agents: byCa.get(row.pin) ?? [],
      }));
      const text = PHASE_TEXT[set.phase];
      if (parsed.values.output === 'json') {
        io.stdout(`${JSON.stringify({ phase: set.phase, means: text.means, next: text.next, enrollment_pins: set.validPins(), cas }, null, 2)}\n`);
        return 0;
      }
      const rows = cas.map((ca) => [
        ca.pin,
        ca.state,
        [ca.signs ? 'signs' : '', ca.serves_brokers ? 'serves' : '', ca.trusted ? 'trusted' : ''].filter(Boolean).join(', ') || '-',
        `${ca.agents.length}${ca.agents.length ? ` (${ca.agents.slice(0, 8).join(', ')}${ca.agents.length > 8 ? ', …' : ''})` : ''}`,
      ]);
      io.stdout(
        [
          `CA rotation phase: ${set.phase} (${text.means})`,
          `Next: ${text.next}`,
          `Agents enroll with pin: ${set.validPins().join(', ')}`,
          '',
          formatTable(['CA PIN', 'STATE', 'ROLE', 'AGENTS'], rows),
          '',
        ].join('\n'),
      );
      return 0;
    } finally {
      await store.close();
    }
  },
});

export const caRotateCommand = defineCommand({
  spec: {
    name: 'ca rotate',
    summary: 'Take the next step of a CA rotation (init, update-clients, update-servers, standby) or roll it back; running brokers follow within a second.',
    usage: 'fleetmesh ca rotate init|update-clients|update-servers|standby|rollback [--force]',
    positionals: [{ name: 'STEP', description: `one of ${STEPS.join(', ')}`, required: true }],
    details:
      'init needs the active CA key: where the store keeps it sealed, give the CA key secret; where the operator keeps it as a file, --ca-key-file. standby refuses while live agents still hold certificates of the CA it drops, unless --force.',
    flags: {
      ...BROKER_DATA_DIR_FLAG,
      force: {
        type: 'boolean',
        description: 'drop a CA even though some agents still hold its certificates (they must enroll again)',
        default: false,
        env: false,
      },
      'ca-key-secret-file': { type: 'string', description: 'a file holding the secret the CA keys are sealed with in the store', placeholder: 'FILE' },
      'ca-key-secret': { type: 'string', description: 'the same secret, from the environment (FLEETMESH_CA_KEY_SECRET)', placeholder: 'SECRET' },
      'ca-key-file': { type: 'string', description: "the active CA's key, where the operator keeps it as a file", placeholder: 'FILE' },
      ...OUTPUT_FLAG,
    },
  },
  async run(parsed, io) {
    const step = parsed.positionals[0] ?? '';
    if (!(STEPS as readonly string[]).includes(step)) {
      throw new FleetError('invalid_argument', `ca rotate: "${step}" is not a step`, { hint: `Steps: ${STEPS.join(', ')}.` });
    }
    const values = parsed.values;
    const secret = values['ca-key-secret-file'] !== undefined ? readSecretFile(values['ca-key-secret-file'], '--ca-key-secret-file') : values['ca-key-secret'];
    const { store, dataDir } = await openStore(values);
    try {
      const set = await rotateCa(store, step as RotationStep, {
        dataDir,
        secret,
        activeKeyPem: values['ca-key-file'] !== undefined ? readSecretFile(values['ca-key-file'], '--ca-key-file') : undefined,
        force: values.force,
      });
      const text = PHASE_TEXT[set.phase];
      if (values.output === 'json') {
        io.stdout(
          `${JSON.stringify({ phase: set.phase, means: text.means, next: text.next, trusted_pins: set.trustedPins(), enrollment_pins: set.validPins() }, null, 2)}\n`,
        );
        return 0;
      }
      io.stdout(
        [
          `CA rotation phase: ${set.phase} (${text.means}).`,
          `Trusted CAs: ${set.trustedPins().join(', ')}`,
          `Next: ${text.next}. fleetmesh ca status shows which agents hold certificates of each CA.`,
          '',
        ].join('\n'),
      );
      return 0;
    } finally {
      await store.close();
    }
  },
});

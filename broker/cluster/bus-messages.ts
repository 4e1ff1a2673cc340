import { z } from 'zod';
import { ERROR_CODES } from '../../shared/errors/fleet-error.ts';
import { MCP_TASK_STATUSES } from '../store/mcp-tasks-table.ts';

/**
 * Subjects and messages brokers exchange over NATS. Every message is signed by
 * the broker that sends it or sealed to the brokers it is for (bus-trust.ts),
 * and a message naming a broker (`broker`, `from`) is believed only from that
 * broker; what agents said inside (hello, reports) is carried as the claim it
 * already was and never routes anything.
 */
export const SUBJECTS = {
  /** A change of which broker holds an agent, or of its state there. */
  presence: 'fleetmesh.presence',
  /** Several presence changes in one message, once every broker listening said on its beat that it reads them. */
  presences: 'fleetmesh.presences',
  /** A broker that (re)joined asks everyone to say again which agents they hold. */
  presenceSync: 'fleetmesh.presence.sync',
  /** Every broker says it is alive, once a beat. */
  beat: 'fleetmesh.broker.beat',
  /** A broker shutting down: its agents are gone from it at once. */
  gone: 'fleetmesh.broker.gone',
  report: 'fleetmesh.report',
  /** Several reports in one message, once every broker listening said on its beat that it reads them. */
  reports: 'fleetmesh.reports',
  /** The latest heartbeat samples of a broker's agents, batched once a beat. */
  samples: 'fleetmesh.samples',
  revoked: 'fleetmesh.revoked',
  /** Calls for several agents held by one broker. */
  brokerCalls: (brokerId: string) => `fleetmesh.calls.broker.${brokerId}`,
  /** Calls for one agent, answered by whichever broker holds it: "no responders" means none does. */
  agentCalls: (agentId: string) => `fleetmesh.calls.agent.${agentId}`,
  cancel: (requestId: string) => `fleetmesh.cancel.${requestId}`,
  /** An MCP task's status, for the sessions of its identity on every broker. */
  taskStatus: 'fleetmesh.task.status',
  /** Certificate requests for the broker holding the signer lease. */
  sign: (brokerId: string) => `fleetmesh.sign.${brokerId}`,
} as const;

const errorInfo = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  hint: z.string(),
  host: z.string().optional(),
  collector: z.string().optional(),
});

const callOutcomeSchema = z.union([
  z.object({
    ok: z.literal(true),
    payload: z.unknown(),
    failedCollectors: z.array(z.string()),
    errors: z.array(errorInfo),
    absentCollectors: z.array(z.string()).optional(),
  }),
  z.object({ ok: z.literal(false), error: errorInfo }),
]);

const brokerId = z.string().min(1).max(200);
const agentId = z.string().min(1).max(200);

export const presenceMessage = z.object({
  broker: brokerId,
  agent: agentId,
  state: z.enum(['online', 'stale', 'offline']),
  /** When the agent's stream opened on that broker: a newer stream elsewhere replaces an older one. */
  connectedAt: z.number(),
  hello: z.record(z.string(), z.unknown()).nullable(),
  labels: z.record(z.string(), z.string()),
  lastSeenAt: z.number().nullable(),
});
export type PresenceMessage = z.infer<typeof presenceMessage>;

export const presencesMessage = z.object({ broker: brokerId, presences: z.array(presenceMessage) });

export const brokerMessage = z.object({ broker: brokerId });

/**
 * A broker asks the others to say again which agents they hold: all of them
 * when it (re)joined, or only the broker `of` names, one it had counted gone
 * while it was only silent and now hears from again. A broker of an earlier
 * version reads no `of` and answers anyway, which is only more than needed.
 */
export const presenceSyncMessage = z.object({ broker: brokerId, of: brokerId.optional() });

/**
 * A broker's beat: it is alive, and where agents reach it (from its own
 * configuration), for a broker evening out its agents; `leaving` once it is
 * shutting down, when no agent should be sent to it any more.
 */
export const beatMessage = z.object({
  broker: brokerId,
  agentAddress: z.string().min(1).max(300).optional(),
  leaving: z.literal(true).optional(),
  /** It reads agents' reports in batches (`SUBJECTS.reports`); a broker of an earlier version does not say so. */
  reportBatches: z.literal(true).optional(),
  /** It reads presence changes in batches (`SUBJECTS.presences`); a broker of an earlier version does not say so. */
  presenceBatches: z.literal(true).optional(),
});

export const reportMessage = z.object({
  broker: brokerId,
  agent: agentId,
  kind: z.string(),
  payload: z.unknown(),
  observedUnixMs: z.number(),
});

/** Reports of agents a broker holds, as they came within a few tens of milliseconds: one signature for them all. */
export const reportsMessage = z.object({
  broker: brokerId,
  reports: z.array(z.object({ agent: agentId, kind: z.string(), payload: z.unknown(), observedUnixMs: z.number() })),
});

export const samplesMessage = z.object({
  broker: brokerId,
  samples: z.array(z.object({ agent: agentId, sample: z.record(z.string(), z.unknown()), lastSeenAt: z.number() })),
});

export const revokedMessage = z.object({ broker: brokerId, agent: agentId });

/** One call for one or more agents held by the broker it is sent to. */
export const callRequest = z.object({
  requestId: z.string().min(1).max(100),
  from: brokerId,
  agents: z.array(agentId).min(1),
  action: z.string(),
  params: z.unknown(),
  /** Time left when sent; the receiving broker counts its own deadline from it (clocks may differ). */
  timeoutMs: z.number().int().nonnegative(),
  /** The identity's name, as the agent is told it. */
  caller: z.string(),
  /** Who asks and for which action: the broker that runs the call authorises it again from these (relay-authorization.ts). */
  authority: z.object({ identityId: z.string().min(1).max(100), actionId: z.string().min(1).max(200), confirmed: z.boolean() }),
  streamChunks: z.boolean(),
  /** The asking broker reads outcomes in batches (`t: 'outcomes'`); one of an earlier version does not say so and gets them one at a time. */
  batchOutcomes: z.literal(true).optional(),
  /** The call's audit row: the receiving broker notes there what its agents answer after the call gave up. */
  auditId: z.string().min(1).max(100).optional(),
});
export type CallRequestMessage = z.infer<typeof callRequest>;

export const callReply = z.discriminatedUnion('t', [
  z.object({ t: z.literal('chunk'), agent: agentId, seq: z.number(), payload: z.unknown() }),
  z.object({ t: z.literal('outcome'), agent: agentId, outcome: callOutcomeSchema }),
  z.object({ t: z.literal('outcomes'), outcomes: z.array(z.object({ agent: agentId, outcome: callOutcomeSchema })).min(1) }),
]);
export type CallReply = z.infer<typeof callReply>;

/** A certificate the broker holding the signer lease is asked to sign (sealed to it: the key is public, the request is a broker's). */
export const signRequest = z.object({
  requestId: z.string().min(1).max(100),
  certificate: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('agent'),
      publicKeyPem: z.string().max(16_384),
      agentId: agentId,
      name: z.string().min(1).max(63),
      lifetimeMs: z.number().int().positive(),
    }),
    z.object({
      kind: z.literal('server'),
      publicKeyPem: z.string().max(16_384),
      names: z.array(z.string().min(1).max(253)).min(1).max(64),
      lifetimeMs: z.number().int().positive(),
    }),
  ]),
});
export type SignRequestMessage = z.infer<typeof signRequest>;

export const signReply = z.union([
  z.object({
    ok: z.literal(true),
    certificatePem: z.string(),
    serial: z.string(),
    notBeforeUnixMs: z.number(),
    notAfterUnixMs: z.number(),
    caPin: z.string(),
  }),
  z.object({ ok: z.literal(false), error: errorInfo }),
]);
export type SignReply = z.infer<typeof signReply>;

/** An MCP task's status as `notifications/tasks/status` carries it (never its result). */
export const taskStatusMessage = z.object({
  broker: brokerId,
  identityId: z.string().min(1).max(100),
  task: z.object({
    taskId: z.string().min(1).max(200),
    status: z.enum(MCP_TASK_STATUSES),
    ttl: z.number(),
    createdAt: z.string(),
    lastUpdatedAt: z.string(),
    pollInterval: z.number(),
    statusMessage: z.string().max(4096).optional(),
  }),
});
export type TaskStatusMessage = z.infer<typeof taskStatusMessage>;

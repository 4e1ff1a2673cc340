import type { agentInfo, agentSetLabels } from '../shared/domains/agent/agent-actions.ts';
import { FleetError } from '../shared/errors/fleet-error.ts';
import type { Logger } from '../shared/log/logger.ts';
import { createKeyPair, type KeyPair } from '../shared/pki/certificates.ts';
import { FLEETMESH_VERSION, PROTOCOL_VERSION } from '../shared/version.ts';
import { type FactRecord, factsToWire } from '../shared/wire/facts-codec.ts';
import { createAgentInfoHandler } from './actions/agent-info.ts';
import type { AgentOptions } from './agent-options.ts';
import type { Collector, CollectorStatus } from './collectors/collector.ts';
import { defaultCollectors } from './collectors/default-collectors.ts';
import { BrokerConnection, type HelloInit } from './connection/broker-connection.ts';
import { Dispatcher } from './dispatcher/dispatcher.ts';
import { enrollAgent } from './enrollment/enroll-agent.ts';
import { enrollWithBackoff } from './enrollment/enroll-with-backoff.ts';
import { caPinsOf, normalizePin } from './enrollment/fetch-broker-ca.ts';
import { hostFacts } from './facts/host-facts.ts';
import { HealthServer } from './health/health-server.ts';
import { type AgentIdentity, loadIdentity } from './identity/agent-identity.ts';
import { AgentLabels } from './identity/agent-labels.ts';
import { ProcReadings } from './sampler/proc-readings.ts';
import { SystemSampler } from './sampler/system-sampler.ts';

/** Which collectors an agent runs: the standard set, or a given list (tests, simulations). */
export type CollectorChoice = 'default' | Collector[];

/**
 * The agent process: its identity (enrolling on first run), its collectors, the
 * dispatcher that runs the broker's calls, and the stream that carries them.
 */
export class Agent {
  readonly startedAt = Date.now();
  private readonly statuses = new Map<string, CollectorStatus>();
  private readonly facts = hostFacts();
  private readonly labels: AgentLabels;
  private collectors: Collector[] = [];
  /** The probe endpoint, when --health-listen asks for one. */
  health: HealthServer | undefined;

  private constructor(
    readonly options: AgentOptions,
    readonly connection: BrokerConnection,
    readonly dispatcher: Dispatcher,
    readonly sampler: SystemSampler,
    private readonly log: Logger,
  ) {
    this.labels = new AgentLabels(options.dataDir, options.labels);
  }

  /** `newKeys`: makes the agent's key pairs (a test fleet of hundreds shares a few; RSA takes 0.2 s a key). */
  static async start(
    options: AgentOptions,
    log: Logger,
    collectors: CollectorChoice = 'default',
    { newKeys = createKeyPair }: { newKeys?: () => Promise<KeyPair> } = {},
  ): Promise<Agent> {
    const identity = await Agent.identity(options, log, newKeys);
    const dispatcher = new Dispatcher(log);
    const sampler = new SystemSampler(new ProcReadings(), options.sampleIntervalMs, undefined, options.hostProc);
    sampler.start();
    let agent: Agent | undefined;
    const current = () => agent as Agent;
    const reenroll =
      options.token && options.caPin
        ? () =>
            enrollAgent({
              brokerAddress: options.brokerAddress ?? identity.brokerAddress,
              token: options.token as string,
              caPin: options.caPin as string,
              name: identity.name,
              dataDir: options.dataDir,
              previous: { agentId: identity.agentId, privateKeyPem: current().connection.currentIdentity.privateKeyPem },
            })
        : undefined;
    const connection = new BrokerConnection({
      dataDir: options.dataDir,
      identity: options.brokerAddress ? { ...identity, brokerAddress: options.brokerAddress } : identity,
      dispatcher,
      hello: () => current().hello(),
      sample: () => sampler.heartbeatSample(),
      containerSamples: () => current().collectors.flatMap((c) => c.takeContainerSamples?.() ?? []),
      log,
      backoffBaseMs: options.backoffBaseMs,
      backoffCapMs: options.backoffCapMs,
      ...(reenroll ? { reenroll } : {}),
      newKeys,
    });
    agent = new Agent(options, connection, dispatcher, sampler, log);
    agent.collectors =
      collectors === 'default'
        ? defaultCollectors(options, sampler, log, {
            report: (kind, payload) => connection.report(kind, payload),
            onAvailabilityChange: () => void current().reprobe(),
            // Learned while the stream is still being opened, the facts may have missed the Hello: send them once it is up.
            onFactsChange: () => (connection.connected ? connection.announce() : connection.once('connected', () => connection.announce())),
          })
        : collectors;
    await agent.startCollectors();
    connection.on('connected', () => {
      for (const collector of current().collectors) collector.onConnected?.();
    });
    if (options.healthListen !== undefined) {
      const health = new HealthServer({ listen: options.healthListen, connected: () => connection.connected });
      try {
        await health.start();
      } catch (error) {
        await agent.stop();
        throw error;
      }
      agent.health = health;
      log.info('serving health probes', { listen: options.healthListen.replace(/:0$/, `:${health.port}`) });
    }
    connection.start();
    return agent;
  }

  /** The identity in the data dir, enrolling first when there is none. */
  private static async identity(options: AgentOptions, log: Logger, newKeys: () => Promise<KeyPair>): Promise<AgentIdentity> {
    const existing = loadIdentity(options.dataDir);
    if (existing) {
      // The pin it was enrolled with, or any CA a rotation has had it trust since: the same broker's.
      const known = [...caPinsOf(existing.caCertificatePem), ...(existing.previousCaPins ?? [])];
      if (options.token !== undefined && options.caPin !== undefined && !known.includes(normalizePin(options.caPin))) {
        throw new FleetError(
          'invalid_argument',
          `${options.dataDir} already holds agent "${existing.name}" of another broker (its CA is not --ca-pin ${normalizePin(options.caPin)}), so --token cannot enroll it`,
          { hint: 'Give this agent a --data-dir of its own, or remove that directory to enroll this host anew.' },
        );
      }
      if (options.name !== existing.name) {
        log.debug('agent is enrolled under another name; keeping it', { enrolled_as: existing.name, requested: options.name });
      }
      return existing;
    }
    if (!options.brokerAddress || !options.token || !options.caPin) {
      const missing = [!options.brokerAddress && '--broker', !options.token && '--token', !options.caPin && '--ca-pin'].filter(Boolean).join(', ');
      throw new FleetError('invalid_argument', `this agent is not enrolled yet (no identity in ${options.dataDir}); missing ${missing}`, {
        hint: 'Run fleetmesh token create on the broker: it prints the exact fleetmesh agent command line to use.',
      });
    }
    log.info('enrolling with the broker', { broker: options.brokerAddress, name: options.name });
    // One key pair for every attempt: a retry after a lost answer is then the same agent to the broker.
    const keys = await newKeys();
    const enroll = { brokerAddress: options.brokerAddress, token: options.token, caPin: options.caPin, name: options.name, dataDir: options.dataDir, keys };
    const identity = await enrollWithBackoff(() => enrollAgent(enroll), { baseMs: options.backoffBaseMs, capMs: options.backoffCapMs, log });
    log.info('enrolled', { name: identity.name, agent_id: identity.agentId, certificate_expires: identity.notAfter.toISOString() });
    return identity;
  }

  private async startCollectors(): Promise<void> {
    const identity = () => this.connection.currentIdentity;
    this.dispatcher.register<typeof agentInfo>(
      'agent.info',
      createAgentInfoHandler({
        describe: () => ({
          agent_id: identity().agentId,
          name: identity().name,
          version: FLEETMESH_VERSION,
          protocol_version: PROTOCOL_VERSION,
          started_at_unix_ms: this.startedAt,
          collectors: this.collectorStatuses(),
          labels: this.labels.current(),
          facts: this.factsRecord(),
          certificate_not_after_unix_ms: identity().notAfter.getTime(),
        }),
        sample: () => this.sampler.heartbeatSample(),
      }),
    );
    this.dispatcher.register<typeof agentSetLabels>('agent.set_labels', async (params) => {
      const labels = this.labels.update(params.labels);
      this.connection.announce();
      return { payload: { labels } };
    });
    for (const collector of this.collectors) {
      collector.register(this.dispatcher);
      try {
        await collector.start?.();
        this.statuses.set(collector.name, await collector.probe());
      } catch (error) {
        this.statuses.set(collector.name, { available: false, reason: (error as Error).message });
      }
      const status = this.statuses.get(collector.name);
      if (!status?.available) this.log.warn('collector unavailable', { collector: collector.name, reason: status?.reason });
    }
  }

  /** Probes every collector again and tells the broker if anything changed. */
  async reprobe(): Promise<void> {
    let changed = false;
    for (const collector of this.collectors) {
      const status = await collector.probe();
      const before = this.statuses.get(collector.name);
      if (before?.available !== status.available || before.reason !== status.reason || before.absent !== status.absent) changed = true;
      this.statuses.set(collector.name, status);
    }
    if (changed) {
      this.log.info('collector availability changed', {
        collectors: this.collectorStatuses()
          .map((c) => `${c.name}=${c.available ? 'up' : 'down'}`)
          .join(','),
      });
      this.connection.announce();
    }
  }

  collectorStatuses(): ({ name: string } & CollectorStatus)[] {
    return this.collectors.map((c) => ({ name: c.name, ...(this.statuses.get(c.name) ?? { available: false, reason: 'not probed yet' }) }));
  }

  /** The host's facts and every collector's, one snake_case record: agent_info shows it, the Hello carries it. */
  private factsRecord(): FactRecord {
    const record: FactRecord = { ...this.facts };
    for (const collector of this.collectors) Object.assign(record, collector.facts?.() ?? {});
    return record;
  }

  private hello(): HelloInit {
    return {
      agentVersion: FLEETMESH_VERSION,
      protocolVersion: PROTOCOL_VERSION,
      actions: this.dispatcher.actions(),
      collectors: this.collectorStatuses(),
      labels: this.labels.current(),
      name: this.connection.currentIdentity.name,
      startedUnixMs: BigInt(this.startedAt),
      facts: factsToWire(this.factsRecord()),
    };
  }

  async stop(): Promise<void> {
    await this.health?.stop();
    await this.connection.stop();
    this.sampler.stop();
    for (const collector of this.collectors) await collector.stop?.();
  }
}

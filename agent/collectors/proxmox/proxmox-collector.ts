import { readFileSync } from 'node:fs';
import type { GuestInventory } from '../../../shared/domains/proxmox/guest-inventory.ts';
import type { proxmoxScriptCommand, proxmoxScriptList } from '../../../shared/domains/proxmox/proxmox-actions.ts';
import type { ProxmoxOptions } from '../../../shared/domains/proxmox/proxmox-options.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { Collector, CollectorStatus, Report } from '../collector.ts';
import { type ApiToken, readApiToken } from './api-token.ts';
import { MembershipCache } from './cluster-membership.ts';
import { readGuests, registerClusterReads } from './cluster-reads.ts';
import { registerGuestPower } from './guest-power.ts';
import type { ProxmoxAccess } from './proxmox-access.ts';
import { failureClassOf, proxmoxFailure } from './proxmox-failure.ts';
import { type CallBounds, PveApi } from './pve-api.ts';
import { PveClient } from './pve-client.ts';
import { registerTaskReads } from './task-reads.ts';

interface ProxmoxCollectorOptions {
  /** Undefined: the agent was not asked for Proxmox VE, and the API tools say so. */
  config: ProxmoxOptions | undefined;
  log: Logger;
  /** The node or cluster name was learned or changed (the agent re-announces its facts). */
  onFactsChange?: () => void;
  /** Reports for the broker's index: the cluster's guests (`proxmox_guests`, for find and describe type guest). */
  report?: Report;
}

/** After a power action, the guest's state is read again this much later (its task has usually finished). */
const AFTER_POWER_MS = 2000;
/** When to ask again for the node's name after the API did not answer, doubling up to the cap. */
const LEARN_RETRY_FIRST_MS = 1000;
const LEARN_RETRY_MAX_MS = 60_000;

const NOT_CONFIGURED = 'not configured (--proxmox-endpoint, --proxmox-token-file)';

/**
 * homebutler's Proxmox VE tools against the API of the node an agent runs on.
 * The collector is available when it is configured and its token file reads;
 * whether the API answers is decided per call, each failure with its class.
 * Token and CA files are read at every call, so rotating them needs no restart.
 */
export class ProxmoxCollector implements Collector, ProxmoxAccess {
  readonly name = 'proxmox';
  readonly membership: MembershipCache;
  private readonly client: PveClient | undefined;
  private readonly stopping = new AbortController();
  private inventoryTimer: NodeJS.Timeout | undefined;
  private soonTimer: NodeJS.Timeout | undefined;
  private learnTimer: NodeJS.Timeout | undefined;
  private inventoryRetryTimer: NodeJS.Timeout | undefined;
  private lastInventory: GuestInventory | undefined;
  private reporting = false;

  constructor(private readonly options: ProxmoxCollectorOptions) {
    this.membership = new MembershipCache(() => options.onFactsChange?.());
    const config = options.config;
    if (config) {
      this.client = new PveClient({
        endpoint: config.endpoint,
        trust: config.trust,
        timeoutMs: config.timeoutMs,
        maxResponseBytes: config.maxResponseBytes,
        log: options.log,
      });
    }
  }

  get endpoint(): string {
    return this.options.config?.endpoint ?? '';
  }

  /** Learns the node's name in the background: the agent must not wait on the API to start. */
  async start(): Promise<void> {
    if (!this.options.config) return;
    let api: PveApi;
    try {
      api = this.reader({ signal: this.stopping.signal, deadlineUnixMs: Number.POSITIVE_INFINITY });
    } catch {
      // probe() reports why the configuration does not work.
      return;
    }
    const inventoryIntervalMs = this.options.config.inventoryIntervalMs;
    // The first inventory waits for the first membership reading (which it needs), so the two do
    // not both ask /cluster/status at start.
    void this.learnMembership(api, LEARN_RETRY_FIRST_MS).finally(() => {
      if (!this.options.report || this.stopping.signal.aborted) return;
      void this.firstInventory(LEARN_RETRY_FIRST_MS);
      this.inventoryTimer = setInterval(() => void this.reportGuests(), inventoryIntervalMs);
      this.inventoryTimer.unref();
    });
  }

  /**
   * Learns the node's name and cluster in the background. An API that did not
   * answer in time is asked again, sooner than the next inventory round and
   * less often each time, so a node whose API was busy at start learns its name.
   */
  private async learnMembership(api: PveApi, retryMs: number): Promise<void> {
    try {
      await this.membership.get(api);
    } catch (error) {
      if (this.stopping.signal.aborted) return;
      const transport = failureClassOf(error) === 'transport';
      this.options.log.warn('proxmox: the node name is not known yet', { error: (error as Error).message, ...(transport ? { retry_in_ms: retryMs } : {}) });
      if (!transport) return;
      this.learnTimer = setTimeout(() => void this.learnMembership(api, Math.min(retryMs * 2, LEARN_RETRY_MAX_MS)), retryMs);
      this.learnTimer.unref();
    }
  }

  /**
   * The first guest inventory: an API that did not answer in time at start is
   * asked again sooner than the next round, as for the node name, so the
   * index learns the guests of a node that was busy when the agent started.
   */
  private async firstInventory(retryMs: number): Promise<void> {
    if ((await this.reportGuests()) !== 'transport' || this.stopping.signal.aborted) return;
    this.inventoryRetryTimer = setTimeout(() => void this.firstInventory(Math.min(retryMs * 2, LEARN_RETRY_MAX_MS)), retryMs);
    this.inventoryRetryTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.learnTimer);
    clearTimeout(this.inventoryRetryTimer);
    clearInterval(this.inventoryTimer);
    clearTimeout(this.soonTimer);
  }

  onConnected(): void {
    if (this.lastInventory) this.options.report?.('proxmox_guests', this.lastInventory);
  }

  /** A guest changed through us: the index hears of it without waiting for the next round. */
  guestsChanged(): void {
    if (!this.options.report || this.stopping.signal.aborted) return;
    clearTimeout(this.soonTimer);
    this.soonTimer = setTimeout(() => void this.reportGuests(), AFTER_POWER_MS);
    this.soonTimer.unref();
  }

  /**
   * Reads the cluster's guests and reports them; a failure is logged and the
   * last report stands. Resolves to the class of the failure, if any.
   */
  private async reportGuests(): Promise<ReturnType<typeof failureClassOf> | undefined> {
    const config = this.options.config;
    if (!config || this.reporting || this.stopping.signal.aborted) return undefined;
    this.reporting = true;
    try {
      const api = this.reader({ signal: this.stopping.signal, deadlineUnixMs: Date.now() + config.timeoutMs });
      // The facts naming the node's cluster go out (onChange) before the first report about that
      // cluster: the broker takes a cluster's guests only from an agent that states its membership.
      const membership = await this.membership.get(api).catch(() => this.membership.current());
      const guests = await readGuests(api);
      this.lastInventory = { cluster: membership?.cluster ?? null, node: membership?.localNode ?? null, taken_unix_ms: Date.now(), guests };
      this.options.report?.('proxmox_guests', this.lastInventory);
      return undefined;
    } catch (error) {
      if (!this.stopping.signal.aborted) this.options.log.debug('proxmox: could not read the guests for the index', { error: (error as Error).message });
      return failureClassOf(error);
    } finally {
      this.reporting = false;
    }
  }

  async probe(): Promise<CollectorStatus> {
    if (!this.options.config) return { available: false, absent: true, reason: NOT_CONFIGURED };
    try {
      this.readToken();
      this.caPem();
      return { available: true, reason: '' };
    } catch (error) {
      return { available: false, reason: (error as Error).message };
    }
  }

  facts(): Record<string, string | number | boolean> {
    const config = this.options.config;
    if (!config) return {};
    const membership = this.membership.current();
    return {
      proxmox_insecure: config.trust.kind === 'insecure',
      ...(membership?.localNode ? { proxmox_node: membership.localNode } : {}),
      ...(membership?.cluster ? { proxmox_cluster: membership.cluster } : {}),
    };
  }

  private configured(): { config: ProxmoxOptions; client: PveClient } {
    if (!this.options.config || !this.client) {
      throw proxmoxFailure('configuration', NOT_CONFIGURED, {
        hint: 'Start the agent of a Proxmox VE node with --proxmox-token-file (and --proxmox-endpoint when the API is not on 127.0.0.1:8006).',
      });
    }
    return { config: this.options.config, client: this.client };
  }

  private readToken(): ApiToken {
    return readApiToken(this.configured().config.tokenFile, '--proxmox-token-file');
  }

  private caPem(): string | undefined {
    const { trust } = this.configured().config;
    if (trust.kind !== 'ca') return undefined;
    let text: string;
    try {
      text = readFileSync(trust.caFile, 'utf8');
    } catch (error) {
      throw proxmoxFailure(
        'configuration',
        `the CA file ${trust.caFile} (--proxmox-ca-file) cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        {
          hint: "Copy the cluster CA (/etc/pve/pve-root-ca.pem on a node) to a file the agent's user can read.",
        },
      );
    }
    if (!text.includes('-----BEGIN CERTIFICATE-----')) {
      throw proxmoxFailure('configuration', `the CA file ${trust.caFile} (--proxmox-ca-file) holds no PEM certificate`, {
        hint: 'Give the PEM file /etc/pve/pve-root-ca.pem of the cluster.',
      });
    }
    return text;
  }

  reader(call: CallBounds): PveApi {
    const { client } = this.configured();
    return new PveApi({ client, token: this.readToken(), caPem: this.caPem(), signal: call.signal, deadlineUnixMs: call.deadlineUnixMs });
  }

  actor(call: CallBounds): PveApi {
    const { config, client } = this.configured();
    if (config.actionTokenFile === undefined) {
      throw proxmoxFailure('configuration', 'no action token is configured, so guest power actions are refused', {
        hint: 'Give the agent --proxmox-action-token-file with a token that has VM.PowerMgmt (proxmox_script_command id api-token-power shows how to make one); the read token is never used for changes.',
      });
    }
    return new PveApi({
      client,
      token: readApiToken(config.actionTokenFile, '--proxmox-action-token-file'),
      caPem: this.caPem(),
      signal: call.signal,
      deadlineUnixMs: call.deadlineUnixMs,
    });
  }

  register(dispatcher: Dispatcher): void {
    registerClusterReads(dispatcher, this);
    registerTaskReads(dispatcher, this);
    registerGuestPower(dispatcher, this);
    // The helper scripts are data shipped with the agent: they answer whether or not the API is configured,
    // and load (with their check) at the first call that reads them.
    dispatcher.register<typeof proxmoxScriptList>('proxmox.script_list', async (params) => {
      const { findScripts, scriptCategories } = await import('./helper-scripts.ts');
      const scripts = findScripts(params).map(({ id, title, description, category, risk }) => ({ id, title, description, category, risk }));
      return { payload: { scripts, count: scripts.length, categories: scriptCategories() } };
    });
    dispatcher.register<typeof proxmoxScriptCommand>('proxmox.script_command', async (params) => {
      const { RUNS_WHERE, scriptById } = await import('./helper-scripts.ts');
      const { id, title, category, risk, command, notes } = scriptById(params.id);
      return { payload: { id, title, category, risk, command, notes, runs_where: RUNS_WHERE } };
    });
  }
}

import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FleetError } from '../shared/errors/fleet-error.ts';
import type { Logger } from '../shared/log/logger.ts';
import { parseHostPort } from '../shared/options/values.ts';
import type { Host } from './agents/agent-registry.ts';
import { AgentRegistry } from './agents/agent-registry.ts';
import { applyBrokerBootstrap } from './bootstrap/broker-bootstrap.ts';
import type { BrokerOptions } from './broker-options.ts';
import { ActionRunner } from './calls/action-runner.ts';
import { RefusalAudit } from './calls/refusal-audit.ts';
import { BrokerCluster } from './cluster/broker-cluster.ts';
import { clusterMetrics } from './cluster/cluster-metrics.ts';
import { BROKER_ACTIONS } from './domains/broker-domains.ts';
import { Enrollment } from './enrollment/enrollment.ts';
import { type FanOutRequest, fanOut, type HostOutcome } from './fanout/fan-out.ts';
import { admissionMetrics } from './grpc/admission-metrics.ts';
import { MeshServer } from './grpc/mesh-server.ts';
import { createHealthRoutes } from './health/health-routes.ts';
import { FleetIndex } from './index/fleet-index.ts';
import { McpHttpServer } from './mcp/http/mcp-http-server.ts';
import { McpSession } from './mcp/mcp-session.ts';
import { SURFACES } from './mcp/surfaces/surfaces.ts';
import { McpTasks } from './mcp/tasks/mcp-tasks.ts';
import { tellSessions } from './mcp/tell-sessions.ts';
import { BrokerMetrics } from './metrics/broker-metrics.ts';
import { UsageHistory } from './metrics/usage-history.ts';
import { OAuthEdge } from './oauth/oauth-edge.ts';
import { serverNames } from './pki/broker-authority.ts';
import { localIssuer } from './pki/certificate-issuer.ts';
import { certificateMetrics } from './pki/certificate-metrics.ts';
import { FleetAuthority } from './pki/fleet-authority.ts';
import { ServingCertificate } from './pki/serving-certificate.ts';
import { BrokerServices } from './services/broker-services.ts';
import { BrokerStore } from './store/broker-store.ts';
import { StaticAssets } from './web/static-assets.ts';
import { WebServer } from './web/web-server.ts';
import { WidgetResources } from './web/widget-resources.ts';

export const BROKER_PID_FILE = 'broker.pid';
/** broker_meta key: the address agents should dial, for the command lines admin commands print. */
export const META_AGENT_ADDRESS = 'agent_address';
/** broker_meta key: the MCP URL, for the client configurations admin commands print. */
export const META_MCP_URL = 'mcp_url';

/** A listener that could not start, said in the operator's terms: which flag to change. */
function listenFailure(what: string, flag: string, address: string, error: unknown, more = ''): FleetError {
  const reason = (error as Error).message;
  return new FleetError('conflict', `cannot listen for ${what} on ${address}: ${/EADDRINUSE/.test(reason) ? 'the address is already in use' : reason}`, {
    hint: `Stop whatever holds that port, or choose another address with ${flag}${more}.`,
  });
}

/** The broker process: its store, its CA, the agent registry and the gRPC endpoint. */
export class Broker {
  private constructor(
    readonly options: BrokerOptions,
    readonly store: BrokerStore,
    readonly authority: FleetAuthority,
    readonly registry: AgentRegistry,
    readonly mesh: MeshServer,
    readonly grpcPort: number,
    readonly mcp: McpHttpServer,
    readonly runner: ActionRunner,
    readonly index: FleetIndex,
    readonly log: Logger,
    readonly cluster: BrokerCluster | undefined,
    /** The web console, when --web-listen is given. */
    readonly web: WebServer | undefined,
    /** The broker's serving certificate, renewed while it runs. */
    readonly serving: ServingCertificate,
    /** OAuth at the MCP edge, when --oauth is not off. */
    readonly oauth: OAuthEdge | undefined,
  ) {}

  /** The MCP endpoint clients use. */
  get mcpUrl(): string {
    return this.mcp.url;
  }

  static async start(options: BrokerOptions, log: Logger): Promise<Broker> {
    const other = readPid(join(options.dataDir, BROKER_PID_FILE));
    if (other !== undefined && other !== process.pid && processAlive(other)) {
      throw new FleetError('conflict', `another broker (pid ${other}) is already running on ${options.dataDir}`, {
        hint: 'Stop it first, or give this one its own --data-dir.',
      });
    }
    const store = await BrokerStore.open(options.dataDir, { store: options.store, brokerId: options.cluster?.brokerId });
    try {
      const authority = await FleetAuthority.open(store, {
        dataDir: options.dataDir,
        given: options.bootstrap.ca,
        secret: options.caKeySecret,
        expected: options.bootstrap.caCertificatePem,
        log,
      });
      await applyBrokerBootstrap(store, options.bootstrap, log);
      const registry = new AgentRegistry(
        store,
        {
          heartbeatIntervalMs: options.heartbeatIntervalMs,
          staleAfterMissed: options.staleAfterMissed,
          offlineAfterMissed: options.offlineAfterMissed,
          storePollMs: options.storePollMs,
          sharedStore: options.cluster !== undefined,
        },
        log,
      );
      await registry.start();
      const callMetrics = new BrokerMetrics();
      const index = new FleetIndex(registry, store, log, callMetrics);
      const refusals = new RefusalAudit(store, options.refusalAuditLimit);
      let cluster: BrokerCluster | undefined;
      try {
        cluster =
          options.cluster &&
          (await BrokerCluster.start(
            options.cluster,
            {
              registry,
              store,
              authority,
              relay: { index, operationsLevel: options.operationsLevel, tools: options.tools, brokerActions: BROKER_ACTIONS },
              refusals,
            },
            log,
          ));
      } catch (error) {
        await registry.stop();
        throw error;
      }
      // A rotation step taken elsewhere (an admin command, another broker) reaches this broker within a second.
      authority.watch(1000);
      const issuer = cluster?.signing ?? localIssuer(authority);
      const serving = new ServingCertificate({
        dataDir: options.dataDir,
        names: serverNames(options.advertiseNames),
        lifetimeMs: options.serverCertTtlMs,
        issue: (publicKeyPem, names, lifetimeMs) => issuer.issueServer({ publicKeyPem, names, lifetimeMs }),
        cas: () => authority.set,
        log,
      });
      try {
        await serving.start();
      } catch (error) {
        authority.stop();
        await cluster?.stop();
        await registry.stop();
        throw error;
      }
      authority.on('changed', (set) => serving.casChanged(set));
      const enrollment = new Enrollment(store, authority, issuer, options.agentCertTtlMs, log);
      const mesh = new MeshServer({
        listen: options.grpcListen,
        authority,
        serving,
        store,
        registry,
        enrollment,
        heartbeatIntervalMs: options.heartbeatIntervalMs,
        offlineAfterMissed: options.offlineAfterMissed,
        admissionRate: options.admissionRate,
        admissionLimits: options.admissionLimits,
        enrollLimits: options.enrollLimits,
        log,
      });
      let port: number;
      try {
        port = await mesh.start();
      } catch (error) {
        await cluster?.stop();
        await registry.stop();
        throw listenFailure('agents', '--grpc-listen', options.grpcListen, error);
      }
      // In a cluster, pending rows may be other brokers' calls still running: only this broker's own are settled
      // here (a restart under the same --broker-id); the others settle those of a broker that died (broker-cluster.ts).
      const interrupted = await store.audit.markInterrupted(Date.now(), cluster ? { brokerIds: [cluster.brokerId] } : {});
      if (interrupted) log.warn('audit rows left pending by the previous run marked interrupted', { count: interrupted });
      index.start();
      const metrics = new UsageHistory(store, registry, log);
      metrics.start();
      const services = new BrokerServices(options.services, { registry, index, log });
      const runner = new ActionRunner({
        registry,
        store,
        log,
        index,
        metrics,
        services,
        operationsLevel: options.operationsLevel,
        tools: options.tools,
        approvals: options.approvals,
        brokerActions: BROKER_ACTIONS,
        recorder: callMetrics,
        refusals,
        mutationsMatchAgentLabels: options.mutationsMatchAgentLabels,
      });
      const widgets = new WidgetResources(options.webAssetsDir);
      const mcpAddress = parseHostPort(options.mcpListen, '--mcp-listen');
      const tasks = new McpTasks(store, log, options.mcpTaskTtlMs, options.textFormat);
      // Tasks the previous run left working end as failed, as its pending audit rows end interrupted (above).
      await tasks.interrupted(cluster ? { brokerIds: [cluster.brokerId] } : {});
      const mcp = new McpHttpServer({
        host: mcpAddress.host,
        port: mcpAddress.port,
        allowedHosts: options.mcpAllowedHosts,
        allowedOrigins: options.mcpAllowedOrigins,
        publicUrl: options.mcpPublicUrl,
        httpLimits: options.httpLimits,
        sessionLimits: options.mcpSessionLimits,
        stopGraceMs: options.stopGraceMs,
        store,
        log,
        refusals,
        tasks,
        createSession: (identity, era, iconOrigin) =>
          new McpSession({
            identity,
            surface: SURFACES[options.toolSurface],
            textFormat: options.textFormat,
            runner,
            registry,
            store,
            log,
            era,
            tasks,
            widgets,
            iconOrigin,
            stillRunningProgressMs: options.stillRunningProgressMs,
          }),
        routes: createHealthRoutes({
          readiness: async () => ({
            store: await store.problem(),
            agents_listener: mesh.listening ? undefined : 'not listening',
            ...(cluster ? { bus: cluster.problem() } : {}),
          }),
          warnings: () => cluster?.warnings() ?? [],
          metrics: () =>
            callMetrics.render(registry.list().map((host) => host.state)) +
            certificateMetrics({
              set: authority.set,
              serving: serving.current,
              servingRenewals: serving.renewals,
              agentRenewals: enrollment.renewals,
              hosts: registry.list(),
              caPins: registry.localSessions().map((session) => session.streamCaPin),
            }) +
            admissionMetrics(mesh.admission()) +
            (cluster ? clusterMetrics(cluster, registry) : ''),
          metricsToken: options.metricsToken,
          onTokenRefused: (req, reason) => refusals.record({ source: req.socket.remoteAddress ?? 'unknown', tool: '/metrics', errorCode: 'forbidden', reason }),
        }),
      });
      try {
        await mcp.start();
      } catch (error) {
        await cluster?.stop();
        await registry.stop();
        await mesh.stop();
        throw listenFailure('MCP clients', '--mcp-listen', options.mcpListen, error);
      }
      let web: WebServer | undefined;
      if (options.webListen !== undefined) {
        const webAddress = parseHostPort(options.webListen, '--web-listen');
        web = new WebServer({
          host: webAddress.host,
          port: webAddress.port,
          allowedHosts: options.webAllowedHosts,
          httpLimits: options.httpLimits,
          assets: new StaticAssets(options.webAssetsDir),
          store,
          registry,
          index,
          runner,
          enrollment: async () => ({
            caPin: authority.set.validPins()[0] ?? authority.pin,
            agentAddress: (await store.getMeta(META_AGENT_ADDRESS)) ?? `${options.advertiseNames[0] ?? 'localhost'}:${port}`,
          }),
          log,
        });
        try {
          await web.start();
        } catch (error) {
          await mcp.stop();
          await cluster?.stop();
          await registry.stop();
          await mesh.stop();
          throw listenFailure('the web console', '--web-listen', options.webListen, error, ' (off turns the console off)');
        }
      }
      let oauth: OAuthEdge | undefined;
      try {
        oauth = await OAuthEdge.start({
          options: options.oauth,
          store,
          log,
          mcp,
          web,
          refusals,
          proxy: options.mcpPublicUrl !== undefined,
          bodyTimeoutMs: options.httpLimits.bodyTimeoutMs,
        });
      } catch (error) {
        await web?.stop();
        await mcp.stop();
        await cluster?.stop();
        await registry.stop();
        await mesh.stop();
        throw error;
      }
      tellSessions({ registry, index, tasks, ...(cluster ? { remoteTasks: cluster } : {}) }, () => mcp.liveSessions());
      // Sessions of a task's identity on other brokers hear of it too.
      if (cluster) tasks.on('status', (identityId, task) => cluster?.shareTaskStatus(identityId, task));
      const dialName = options.advertiseNames[0] ?? 'localhost';
      await store.setMeta(META_AGENT_ADDRESS, `${dialName}:${port}`);
      await store.setMeta(META_MCP_URL, mcp.url);
      writeFileSync(join(options.dataDir, BROKER_PID_FILE), `${process.pid}\n`);
      log.info('broker listening for MCP clients', {
        mcp: mcp.url,
        store: store.description,
        surface: options.toolSurface,
        operations_level: options.operationsLevel,
        ...(oauth ? { oauth: options.oauth.mode, issuer: oauth.issuer } : {}),
      });
      log.info('broker listening for agents', {
        grpc: `${parseHostPort(options.grpcListen, 'grpc').host}:${port}`,
        ca_pin: authority.pin,
        names: serving.current.names.join(','),
      });
      if (web) log.info('web console listening', { url: web.url });
      if (cluster) log.info('broker joined the cluster', { broker: cluster.brokerId });
      return new Broker(options, store, authority, registry, mesh, port, mcp, runner, index, log, cluster, web, serving, oauth);
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  /** One call to many hosts, every host settling on its own (see fan-out.ts). */
  fanOut(targets: readonly Host[], request: FanOutRequest): Promise<HostOutcome[]> {
    return fanOut(targets, request);
  }

  async stop(): Promise<void> {
    // The other brokers of a cluster stop sending agents here before anything else winds down.
    this.cluster?.leave();
    this.oauth?.stop();
    await this.web?.stop();
    await this.mcp.stop();
    this.index.stop();
    this.runner.services.stop();
    await this.runner.metrics.stop();
    // Agents are told when to come back before their streams close, so a restart brings them back spread out.
    // In a cluster, before leaving the bus: the other brokers hear them go and come back elsewhere, and calls
    // for them from other brokers are served until then.
    // In a cluster, each agent is sent to another broker alive now, rather than left to dial this one again.
    await this.mesh.drain(undefined, this.cluster?.otherAgentAddresses() ?? []);
    await this.cluster?.stop();
    await this.registry.stop();
    await this.mesh.stop();
    this.serving.stop();
    this.authority.stop();
    const pidFile = join(this.options.dataDir, BROKER_PID_FILE);
    if (readPid(pidFile) === process.pid) rmSync(pidFile, { force: true });
    await this.store.close();
  }
}

/** The pid in a broker pid file, if there is a readable one. */
export function readPid(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

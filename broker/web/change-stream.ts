import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import type { WebSession, WebSessions } from './web-sessions.ts';

interface Listener {
  sessionId: string;
  session: WebSession;
  res: ServerResponse;
  pending: Set<string>;
}

/** Changes are sent at most this often per browser: a fleet's heartbeats come by the hundred each second. */
const FLUSH_INTERVAL_MS = 500;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

/**
 * Server-sent events for the console, from the changes that drive MCP resource
 * subscriptions (an agent's state, what the fleet index learns) plus fresh
 * heartbeat samples. Each event names the `fleet://` resources that changed;
 * the page re-reads what it shows. A host is named only to sessions whose
 * grants reach it, and a stream ends once its session does.
 */
export class ChangeStream {
  private readonly listeners = new Set<Listener>();
  private timers: NodeJS.Timeout[] = [];
  private readonly onState = (host: Host) => this.publish(['fleet://agents', 'fleet://status', `fleet://agents/${host.name}`], host.name);
  private readonly onHeartbeat = (host: Host) => this.publish(['fleet://samples'], host.name);
  private readonly onIndex = () => this.publish(['fleet://status', 'fleet://recommendations', 'fleet://index']);

  constructor(
    private readonly registry: AgentRegistry,
    private readonly index: FleetIndex,
    private readonly sessions: WebSessions,
  ) {}

  start(): void {
    this.registry.on('state', this.onState);
    this.registry.on('heartbeat', this.onHeartbeat);
    this.index.on('changed', this.onIndex);
    this.timers = [setInterval(() => void this.flush(), FLUSH_INTERVAL_MS), setInterval(() => this.keepAlive(), KEEPALIVE_MS)];
    for (const timer of this.timers) timer.unref();
  }

  stop(): void {
    this.registry.off('state', this.onState);
    this.registry.off('heartbeat', this.onHeartbeat);
    this.index.off('changed', this.onIndex);
    for (const timer of this.timers) clearInterval(timer);
    for (const listener of this.listeners) listener.res.end();
    this.listeners.clear();
  }

  serve(req: IncomingMessage, res: ServerResponse, sessionId: string, session: WebSession, headers: Record<string, string>): void {
    res.writeHead(200, { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    const listener: Listener = { sessionId, session, res, pending: new Set() };
    this.listeners.add(listener);
    req.on('close', () => this.listeners.delete(listener));
  }

  private publish(uris: string[], host?: string): void {
    for (const listener of this.listeners) {
      if (host !== undefined && !listener.session.identity.grants.reachesHost(host)) continue;
      for (const uri of uris) listener.pending.add(uri);
    }
  }

  private async flush(): Promise<void> {
    for (const listener of [...this.listeners]) {
      if (listener.pending.size === 0) continue;
      if (!(await this.sessions.get(listener.sessionId))) {
        this.listeners.delete(listener);
        listener.res.end();
        continue;
      }
      const uris = [...listener.pending];
      listener.pending.clear();
      listener.res.write(`event: changed\ndata: ${JSON.stringify({ uris })}\n\n`);
    }
  }

  private keepAlive(): void {
    for (const listener of this.listeners) listener.res.write(': keep-alive\n\n');
  }
}

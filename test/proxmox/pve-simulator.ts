import { createHash, randomUUID, X509Certificate } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { type CertificateAuthority, createCertificateAuthority, createKeyPair, issueServerCertificate } from '../../shared/pki/certificates.ts';
import { ApiSchema } from './api-schema.ts';
import { type GuestType, type PowerAction, PveCluster, PveRefusal, type SimTask } from './pve-cluster.ts';

/** A token the simulator knows: the id, its secret, and what its ACLs allow. */
export interface SimToken {
  /** `USER@REALM!TOKENID`. */
  id: string;
  secret: string;
  /** Sys.Audit and VM.Audit on / (what PVEAuditor gives). */
  audit: boolean;
  /** VM.PowerMgmt on /vms. */
  power: boolean;
}

export interface PveSimulatorOptions {
  tokens: SimToken[];
  clusterName?: string;
  /** One HTTPS API per node; every node answers cluster-wide calls from the same state. */
  nodes?: string[];
  /** How long a guest power task runs before it finishes (default 300 ms). */
  taskDurationMs?: number;
}

/** A deliberate departure from the API, for the failure tests; recorded apart from the violations it produces. */
export type Fault =
  | { kind: 'delay'; ms: number }
  | { kind: 'garbage' }
  | { kind: 'misshape' }
  | { kind: 'reset' }
  | { kind: 'status'; status: number; reason: string };

export interface RecordedRequest {
  node: string;
  method: string;
  path: string;
  template: string | undefined;
  /** The token id presented, never its secret. */
  tokenId: string | undefined;
  status: number;
}

interface NodeServer {
  node: string;
  server: Server;
  port: number;
  certificatePem: string;
}

interface ActiveFault {
  method: string | undefined;
  template: string;
  tokenId: string | undefined;
  fault: Fault;
  remaining: number;
}

const schema = ApiSchema.load();

function fingerprintOf(certificatePem: string): string {
  return (createHash('sha256').update(new X509Certificate(certificatePem).raw).digest('hex').toUpperCase().match(/../g) ?? []).join(':');
}

/**
 * A Proxmox VE cluster's API for tests: one HTTPS server per node, with
 * certificates from a cluster CA made with the repo's PKI helpers, API tokens
 * checked as Proxmox VE checks them, ACLs that give 403s and filtered (empty)
 * views, and faults on demand. Every request it accepts and every answer it
 * gives is checked against the official API schema; what does not conform is
 * kept in `violations`, which every test asserts is empty.
 */
export class PveSimulator {
  readonly violations: string[] = [];
  readonly injected: string[] = [];
  readonly requests: RecordedRequest[] = [];
  private readonly faults: ActiveFault[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(
    readonly cluster: PveCluster,
    readonly authority: CertificateAuthority,
    private readonly servers: NodeServer[],
    private readonly tokens: SimToken[],
  ) {}

  static async start(options: PveSimulatorOptions): Promise<PveSimulator> {
    const nodes = options.nodes ?? ['pve1', 'pve2'];
    const cluster = new PveCluster(options.clusterName ?? 'homelab', nodes, options.taskDurationMs ?? 300);
    const authority = await createCertificateAuthority({ commonName: 'Proxmox Virtual Environment', lifetimeMs: 86_400_000 });
    const servers: NodeServer[] = [];
    const simulator = new PveSimulator(cluster, authority, servers, options.tokens);
    for (const node of nodes) {
      const { key, cert } = await simulator.certificateFor(node);
      const server = createServer({ key, cert }, (request, response) => void simulator.serve(node, request, response));
      server.on('connection', (socket: Socket) => {
        simulator.sockets.add(socket);
        socket.on('close', () => simulator.sockets.delete(socket));
      });
      // A client that gives up mid-handshake (a pin mismatch) is expected, not an error.
      server.on('tlsClientError', () => undefined);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      servers.push({ node, server, port: (server.address() as AddressInfo).port, certificatePem: cert });
    }
    return simulator;
  }

  private async certificateFor(node: string): Promise<{ key: string; cert: string }> {
    const keys = await createKeyPair();
    const issued = issueServerCertificate(this.authority, { publicKeyPem: keys.publicKeyPem, names: [node, 'localhost', '127.0.0.1'], lifetimeMs: 86_400_000 });
    return { key: keys.privateKeyPem, cert: issued.certificatePem };
  }

  private serverOf(node: string): NodeServer {
    const server = this.servers.find((candidate) => candidate.node === node);
    if (!server) throw new Error(`the simulator has no node ${node}`);
    return server;
  }

  /** The URL an agent on this node is given (`--proxmox-endpoint`). */
  endpoint(node: string): string {
    return `https://127.0.0.1:${this.serverOf(node).port}`;
  }

  /** SHA-256 of the node's certificate, as `pvenode cert info` prints it. */
  fingerprint(node: string): string {
    return fingerprintOf(this.serverOf(node).certificatePem);
  }

  /** The cluster CA, as /etc/pve/pve-root-ca.pem holds it. */
  get caPem(): string {
    return this.authority.certificatePem;
  }

  /** A token file's content. */
  tokenLine(id: string): string {
    const token = this.tokens.find((candidate) => candidate.id === id);
    if (!token) throw new Error(`the simulator has no token ${id}`);
    return `${token.id}=${token.secret}\n`;
  }

  /** A token of its own for one agent, with the rights of `like`, so a test can aim faults and count requests at that agent alone. */
  addToken(id: string, like: Pick<SimToken, 'audit' | 'power'>): SimToken {
    const token = { id, secret: randomUUID(), ...like };
    this.tokens.push(token);
    return token;
  }

  /** A new certificate for the node (from the same CA), as after pvecm updatecerts: a pinned fingerprint no longer matches. */
  async rotateCertificate(node: string): Promise<void> {
    const server = this.serverOf(node);
    const { key, cert } = await this.certificateFor(node);
    server.server.setSecureContext({ key, cert });
    server.certificatePem = cert;
  }

  /**
   * Serves `fault` for the next `times` requests matching method and path
   * template and, when given, the token presented: every agent reads the API in
   * the background too (membership, guest inventory), and a fault meant for one
   * call must not be spent on another agent's round.
   */
  inject(match: { method?: string; template: string; tokenId?: string }, fault: Fault, times = Number.POSITIVE_INFINITY): void {
    this.faults.push({ method: match.method, template: match.template, tokenId: match.tokenId, fault, remaining: times });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  /** Requests to a path template, of one token's holder when `tokenId` is given. */
  requestsTo(template: string, method = 'GET', tokenId?: string): RecordedRequest[] {
    return this.requests.filter(
      (request) => request.template === template && request.method === method && (tokenId === undefined || request.tokenId === tokenId),
    );
  }

  async stop(): Promise<void> {
    this.cluster.stop();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(this.servers.map(({ server }) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }

  private takeFault(method: string, template: string | undefined, tokenId: string | undefined): Fault | undefined {
    const active = this.faults.find(
      (fault) =>
        fault.template === template &&
        (fault.method === undefined || fault.method === method) &&
        (fault.tokenId === undefined || fault.tokenId === tokenId) &&
        fault.remaining > 0,
    );
    if (!active) return undefined;
    active.remaining -= 1;
    return active.fault;
  }

  private authenticate(request: IncomingMessage): { token?: SimToken; tokenId?: string; refusal?: PveRefusal } {
    const header = request.headers.authorization;
    if (!header) return { refusal: new PveRefusal(401, 'No ticket') };
    const match = /^PVEAPIToken=([^=\s]+)=(\S+)$/.exec(header);
    if (!match) return { refusal: new PveRefusal(401, 'authentication failure') };
    const token = this.tokens.find((candidate) => candidate.id === match[1]);
    if (!token || token.secret !== match[2]) return { tokenId: match[1], refusal: new PveRefusal(401, 'authentication failure') };
    return { token, tokenId: token.id };
  }

  private async readParams(method: string, url: URL, request: IncomingMessage): Promise<Record<string, string>> {
    if (method === 'GET') return Object.fromEntries(url.searchParams);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    if (body === '') return {};
    if ((request.headers['content-type'] ?? '').includes('application/json')) {
      return Object.fromEntries(Object.entries(JSON.parse(body) as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
    }
    return Object.fromEntries(new URLSearchParams(body));
  }

  private async serve(node: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', 'https://pve.invalid');
    const record: RecordedRequest = { node, method, path: url.pathname, template: undefined, tokenId: undefined, status: 0 };
    this.requests.push(record);
    const send = (status: number, reason: string, body: unknown) => {
      record.status = status;
      if (response.destroyed) return;
      response.writeHead(status, reason, { 'Content-Type': 'application/json;charset=UTF-8' });
      response.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (!url.pathname.startsWith('/api2/json/')) {
      this.violations.push(`${method} ${url.pathname}: not below /api2/json`);
      send(404, 'Not Found', { data: null });
      return;
    }
    const path = url.pathname.slice('/api2/json'.length);
    const params = await this.readParams(method, url, request);
    const checked = schema.checkRequest(method, path, params);
    record.template = checked.matched?.template;
    if (checked.problems.length) {
      this.violations.push(...checked.problems);
      if (!checked.matched?.methods[method]) send(501, `Method '${method} ${path}' not implemented`, { data: null });
      else send(400, 'Parameter verification failed.', { data: null, errors: Object.fromEntries(checked.problems.map((p, i) => [`problem${i}`, p])) });
      return;
    }
    const matched = checked.matched as NonNullable<typeof checked.matched>;
    const auth = this.authenticate(request);
    record.tokenId = auth.tokenId;
    if (auth.refusal) {
      send(auth.refusal.status, auth.refusal.reason, { data: null });
      return;
    }
    const fault = this.takeFault(method, matched.template, auth.tokenId);
    if (fault) {
      this.injected.push(`${fault.kind} ${method} ${matched.template}`);
      if (fault.kind === 'reset') {
        record.status = -1;
        request.socket.destroy();
        return;
      }
      if (fault.kind === 'garbage') {
        send(200, 'OK', '<html><body>502 Bad Gateway</body></html>');
        return;
      }
      if (fault.kind === 'misshape') {
        send(200, 'OK', { data: { unexpected: 'shape' } });
        return;
      }
      if (fault.kind === 'status') {
        send(fault.status, fault.reason, { data: null });
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          resolve();
        }, fault.ms);
        this.timers.add(timer);
      });
      if (response.destroyed) return;
    }
    try {
      const answer = this.route(node, method, matched.template, matched.variables, params, auth.token as SimToken);
      const problems = schema.checkReturns(method, matched.template, answer.data);
      this.violations.push(...problems);
      send(200, 'OK', answer.total === undefined ? { data: answer.data } : { data: answer.data, total: answer.total });
    } catch (error) {
      if (!(error instanceof PveRefusal)) {
        this.violations.push(`${method} ${matched.template}: the simulator failed: ${(error as Error).message}`);
        send(500, 'simulator error', { data: null });
        return;
      }
      send(error.status, error.reason, { data: null });
    }
  }

  /** The endpoints the collector calls. A documented endpoint the simulator lacks answers 501 and counts as a violation. */
  private route(
    local: string,
    method: string,
    template: string,
    vars: Record<string, string>,
    params: Record<string, string>,
    token: SimToken,
  ): { data: unknown; total?: number } {
    const audit = (path: string) => {
      if (!token.audit) throw new PveRefusal(403, `Permission check failed (${path}, Sys.Audit)`);
    };
    const node = vars.node ?? '';
    const flag = (name: string) => /^(1|true|yes|on)$/i.test(params[name] ?? '');
    const readable = (task: SimTask) => token.audit || task.user === token.id;
    switch (`${method} ${template}`) {
      case 'GET /version':
        return { data: { version: '8.3.2', release: '8.3', repoid: '3e76eec21c4a14a7' } };
      case 'GET /cluster/status':
        audit('/');
        return { data: this.cluster.clusterStatus(local) };
      case 'GET /cluster/resources':
        // Open to every user, filtered by what each may see: an unprivileged token gets [] and no error.
        return { data: this.cluster.resources(params.type, { nodes: token.audit, guests: token.audit }) };
      case 'GET /nodes/{node}/status':
        audit(`/nodes/${node}`);
        return { data: this.cluster.nodeStatus(node) };
      case 'GET /nodes/{node}/tasks':
        return {
          data: this.cluster.listTasks(
            node,
            {
              limit: Number(params.limit ?? 50),
              start: Number(params.start ?? 0),
              errors: flag('errors'),
              source: params.source ?? 'archive',
              ...(params.vmid ? { vmid: Number(params.vmid) } : {}),
              ...(params.typefilter ? { typefilter: params.typefilter } : {}),
              ...(params.since ? { since: Number(params.since) } : {}),
            },
            readable,
          ),
        };
      case 'GET /nodes/{node}/tasks/{upid}/status':
      case 'GET /nodes/{node}/tasks/{upid}/log': {
        const task = this.cluster.task(node, vars.upid ?? '');
        if (!readable(task)) audit(`/nodes/${node}`);
        if (template.endsWith('/status')) return { data: this.cluster.taskStatus(task) };
        const log = this.cluster.taskLog(task, Number(params.start ?? 0), Number(params.limit ?? 50));
        return { data: log.lines, total: log.total };
      }
    }
    const power = /^POST \/nodes\/\{node\}\/(qemu|lxc)\/\{vmid\}\/status\/(start|reboot|shutdown)$/.exec(`${method} ${template}`);
    if (power) {
      if (!token.power) throw new PveRefusal(403, `Permission check failed (/vms/${vars.vmid}, VM.PowerMgmt)`);
      return { data: this.cluster.power(node, power[1] as GuestType, Number(vars.vmid), power[2] as PowerAction, token.id) };
    }
    this.violations.push(`${method} ${template}: documented, but the simulator does not implement it`);
    throw new PveRefusal(501, `Method '${method} ${template}' not implemented`);
  }
}

/** Three tokens as a cluster would have them for fleetmesh: read, power, and one whose ACLs give it nothing. */
export function simulatorTokens(): { read: SimToken; power: SimToken; bare: SimToken } {
  return {
    read: { id: 'fleetmesh@pve!read', secret: randomUUID(), audit: true, power: false },
    power: { id: 'fleetmesh@pve!power', secret: randomUUID(), audit: false, power: true },
    bare: { id: 'fleetmesh@pve!bare', secret: randomUUID(), audit: false, power: false },
  };
}

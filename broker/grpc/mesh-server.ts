import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { FleetError, toFleetError } from '../../shared/errors/fleet-error.ts';
import {
  type BrokerFrame,
  BrokerFrameSchema,
  EnrollRequestSchema,
  type EnrollResponse,
  EnrollResponseSchema,
  Mesh,
  ReconnectSchema,
} from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import type { Logger } from '../../shared/log/logger.ts';
import { parseHostPort } from '../../shared/options/values.ts';
import { MAX_MESSAGE_BYTES } from '../../shared/version.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { AgentSession } from '../agents/agent-session.ts';
import type { Enrollment } from '../enrollment/enrollment.ts';
import { joinTokenId } from '../enrollment/join-tokens.ts';
import { type RateLimit, RateLimiter } from '../limits/rate-limiter.ts';
import { ThrottledWarnings } from '../limits/throttled-warnings.ts';
import type { CaSet } from '../pki/ca-set.ts';
import type { FleetAuthority } from '../pki/fleet-authority.ts';
import type { ServingCertificate, ServingIdentity } from '../pki/serving-certificate.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { AdmissionGate, type AdmissionLimits } from './admission-gate.ts';
import { type AdmissionRate, spreadReturns } from './admission-pacer.ts';
import { decodeAgentFrame } from './agent-frames.ts';
import { createConnectHandler } from './connect-handler.ts';
import { GrpcServer } from './grpc-server.ts';
import { trustUpdateFor } from './trust-updates.ts';

interface MeshServerOptions {
  listen: string;
  /** The fleet's CAs: what TLS accepts from agents, and what a rotation step tells them. */
  authority: FleetAuthority;
  /** The broker's serving certificate, renewed while it runs. */
  serving: ServingCertificate;
  store: BrokerStore;
  registry: AgentRegistry;
  enrollment: Enrollment;
  heartbeatIntervalMs: number;
  /** Heartbeats missed before the registry ends a silent agent's stream. */
  offlineAfterMissed: number;
  /** How fast agent connections are taken on (TLS handshakes begun); the excess waits for its turn. */
  admissionRate: AdmissionRate;
  /** What one source address, and all together, may hold of the agents' port before their first call. */
  admissionLimits: AdmissionLimits;
  /** Enroll attempts allowed per source address and per join token id. */
  enrollLimits: { perSource: RateLimit; perToken: RateLimit };
  log: Logger;
}

/** The address of a peer (`ADDRESS:PORT`), without the port. */
function peerAddress(peer: string): string {
  return peer.replace(/:\d+$/, '');
}

/** A name or id a stranger sent, for a log line: short ones as they are, long ones by their length. */
function loggable(text: string, maxLength: number): string {
  return text.length <= maxLength ? text : `(${text.length} characters)`;
}

function admit(limiter: RateLimiter, key: string, what: string): void {
  const decision = limiter.take(key);
  if (decision.allowed) return;
  const seconds = Math.ceil(decision.retryAfterMs / 1000);
  throw new FleetError('forbidden', `too many enrollment attempts ${what}; retry in ${seconds} s`, {
    hint: `Wait ${seconds} s before enrolling again: the broker limits enrollments per source address and per join token.`,
    details: { retryAfterMs: decision.retryAfterMs },
  });
}

/** How long a broker shutting down lets calls in flight on its agents' streams finish before it moves the agents. */
const DRAIN_GRACE_MS = 10_000;

/** The broker's gRPC endpoint: Enroll for newcomers, Connect for enrolled agents, one TLS port. */
export class MeshServer {
  private server: GrpcServer | undefined;
  private gate: AdmissionGate | undefined;
  private readonly enrollsBySource: RateLimiter;
  private readonly enrollsByToken: RateLimiter;
  /** Refused enrollments are logged, at most 20 lines at once and 6 a minute. */
  private readonly refusals: ThrottledWarnings;

  constructor(private readonly options: MeshServerOptions) {
    this.enrollsBySource = new RateLimiter(options.enrollLimits.perSource);
    this.enrollsByToken = new RateLimiter(options.enrollLimits.perToken);
    this.refusals = new ThrottledWarnings(options.log, { burst: 20, perMinute: 6 });
  }

  /** Counts an Enroll attempt against its source and its token id, or refuses it saying when to retry. */
  private admitEnroll(source: string, tokenId: string | undefined): void {
    admit(this.enrollsBySource, source, `from ${source}`);
    if (tokenId) admit(this.enrollsByToken, tokenId, `with join token ${tokenId}`);
  }

  /** What the admission gate holds and has done, while the port is bound. */
  admission(): ReturnType<AdmissionGate['figures']> | undefined {
    return this.gate?.figures();
  }

  /** Whether the port is bound and serving (readiness). */
  get listening(): boolean {
    return this.server !== undefined;
  }

  /** Binds and serves; resolves with the bound port (useful with port 0). */
  async start(): Promise<number> {
    const { options } = this;
    const server = new GrpcServer({
      tls: this.tlsOptions(options.serving.current, options.authority.set),
      maxMessageBytes: MAX_MESSAGE_BYTES,
      keepaliveIntervalMs: 20_000,
      // A silent agent is the registry's to judge by its heartbeats (stale, then offline after the grace): a keepalive
      // ping unanswered by a stopped agent process must not end its stream first, which once sent SIGSTOPped agents
      // straight to offline without ever being stale.
      keepaliveTimeoutMs: Math.max(10_000, options.heartbeatIntervalMs * (options.offlineAfterMissed + 2)),
    });
    const connect = createConnectHandler({ ...options, leaving: () => this.elsewhere });
    // A connection's first call shows its TLS handshake is done: the gate stops counting it against its source.
    let gate: AdmissionGate | undefined;
    server.unary(
      `/${Mesh.typeName}/${Mesh.method.enroll.name}`,
      { decode: (bytes) => fromBinary(EnrollRequestSchema, bytes), encode: (message: EnrollResponse) => toBinary(EnrollResponseSchema, message) },
      async (request, call) => {
        gate?.established(call.getPeer());
        const source = peerAddress(call.getPeer());
        const tokenId = request.token.length <= 128 ? joinTokenId(request.token) : undefined;
        try {
          this.admitEnroll(source, tokenId);
          const result = await options.enrollment.enroll({
            token: request.token,
            csrPem: request.csrPem,
            name: request.name,
            previousAgentId: request.previousAgentId,
            agentVersion: request.agentVersion,
          });
          await options.registry.refreshFromStore(result.agentId);
          return create(EnrollResponseSchema, {
            agentId: result.agentId,
            name: result.name,
            certificatePem: result.certificatePem,
            caCertificatePem: result.caCertificatePem,
            notAfterUnixMs: BigInt(result.notAfter.getTime()),
            labels: result.labels,
          });
        } catch (error) {
          const failure = toFleetError(error);
          this.refusals.warn('enrollment refused', {
            source,
            name: loggable(request.name, 63),
            token_id: tokenId,
            reason: failure.message,
          });
          throw failure;
        }
      },
    );
    server.stream(
      `/${Mesh.typeName}/${Mesh.method.connect.name}`,
      // The frames agents send by the thousand are read without protobuf-es's reflection.
      { decode: decodeAgentFrame, encode: (message: BrokerFrame) => toBinary(BrokerFrameSchema, message) },
      (call) => {
        gate?.established(call.getPeer());
        connect(call);
      },
    );
    // The port is our own listener's: connections reach the server's TLS only when the gate admits them.
    gate = new AdmissionGate({ rate: options.admissionRate, limits: options.admissionLimits, admit: (socket) => server.inject(socket) });
    const address = parseHostPort(options.listen, '--grpc-listen');
    let port: number;
    try {
      port = await gate.listen(address.host, address.port);
    } catch (error) {
      await server.close(0);
      throw error;
    }
    this.gate = gate;
    this.server = server;
    options.serving.on('changed', this.onServingChanged);
    options.authority.on('changed', this.onCasChanged);
    return port;
  }

  /** The TLS server's options: the serving identity (its chain carries the CA, for an enrolling agent to check against its pin), and the CAs client certificates are checked against. */
  private tlsOptions(identity: ServingIdentity, set: CaSet): { key: Buffer; cert: Buffer; ca: Buffer } {
    return { key: Buffer.from(identity.privateKeyPem), cert: Buffer.from(identity.certificatePem), ca: Buffer.from(set.clientCasPem()) };
  }

  /** Set once draining: the other brokers' agent addresses (none alone). */
  private elsewhere: readonly string[] | undefined;

  private readonly onServingChanged = (identity: ServingIdentity): void => {
    this.server?.setTls(this.tlsOptions(identity, this.options.authority.set));
  };

  /**
   * A CA rotation step: TLS accepts the fleet's CAs as they are now, every
   * connected agent hears what to trust and whether to renew, and once a CA
   * is rotated out the agents whose streams were opened with its
   * certificates reconnect (spread out) with their renewed ones, or are
   * refused in words.
   */
  private readonly onCasChanged = (set: CaSet): void => {
    this.server?.setTls(this.tlsOptions(this.options.serving.current, set));
    const leaving: AgentSession[] = [];
    for (const session of this.options.registry.localSessions()) {
      const trust = trustUpdateFor(session, set);
      if (trust) {
        session.send({ case: 'trust', value: trust });
        session.trustedCaPins = set.trustedPins();
      }
      if (session.streamCaPin !== '' && !set.isTrusted(session.streamCaPin)) leaving.push(session);
    }
    const waits = spreadReturns(leaving.length, this.options.admissionRate);
    leaving.forEach((session, i) => {
      session.send({ case: 'reconnect', value: create(ReconnectSchema, { delayMs: waits[i] ?? 0, reason: 'the CA of this stream was rotated out' }) });
    });
  };

  /**
   * Moves every connected agent away: no new call goes to them, the calls in
   * flight on their streams (including those other brokers of a cluster sent
   * through this one) are let finish for up to `graceMs`, then each agent is
   * asked to reconnect and its stream ends. Given `elsewhere`, the addresses
   * of the other brokers of a cluster, each agent is sent to one of them in
   * turn, its wait spread over the time that broker's share needs to be
   * admitted, so it is held again at once rather than redialling this one;
   * alone, each is told to come back later, its wait spread over the time the
   * admission rate needs to take them all back, so a restarted broker sees its
   * fleet return spread out. No answer under way is cut off.
   */
  async drain(graceMs = DRAIN_GRACE_MS, elsewhere: readonly string[] = []): Promise<void> {
    // From now on a stream that opens is sent on at once: the sessions moved below are all this broker will hold.
    this.elsewhere = elsewhere;
    const sessions = this.options.registry.localSessions();
    for (const session of sessions) session.draining = true;
    const until = Date.now() + graceMs;
    while (Date.now() < until && sessions.some((session) => session.isOpen && session.inFlight > 0)) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const waits = spreadReturns(Math.ceil(sessions.length / Math.max(1, elsewhere.length)), this.options.admissionRate);
    sessions.forEach((session, i) => {
      const address = elsewhere[i % elsewhere.length];
      const delayMs = waits[Math.floor(i / Math.max(1, elsewhere.length))] ?? 0;
      const reason = address ? `the broker is shutting down; reconnect to ${address}` : 'the broker is shutting down';
      session.send({ case: 'reconnect', value: create(ReconnectSchema, { delayMs, reason, ...(address ? { address } : {}) }) });
      session.close();
    });
  }

  async stop(): Promise<void> {
    this.options.serving.off('changed', this.onServingChanged);
    this.options.authority.off('changed', this.onCasChanged);
    const server = this.server;
    this.server = undefined;
    this.gate?.close();
    this.gate = undefined;
    await server?.close(2000);
  }
}

import { create } from '@bufbuild/protobuf';
import { FleetError, toFleetError } from '../../shared/errors/fleet-error.ts';
import { type AgentFrame, type BrokerFrame, type Hello, ReconnectSchema, RenewResponseSchema, WelcomeSchema } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { toGrpcStatus } from '../../shared/grpc/grpc-status.ts';
import { GrpcCode } from '../../shared/grpc/status-codes.ts';
import type { Logger } from '../../shared/log/logger.ts';
import { agentIdFromAltNames, normalizeSerial } from '../../shared/pki/certificates.ts';
import { FLEETMESH_VERSION } from '../../shared/version.ts';
import { factsFromWire } from '../../shared/wire/facts-codec.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import { AgentSession } from '../agents/agent-session.ts';
import type { Enrollment } from '../enrollment/enrollment.ts';
import type { FleetAuthority } from '../pki/fleet-authority.ts';
import type { AgentRow, StoredHello } from '../store/agents-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { ServerCall, StreamHandler } from './grpc-server.ts';
import { trustUpdateFor } from './trust-updates.ts';
import { versionSkew } from './version-skew.ts';

/** An agent that opens a stream and sends no Hello within this time is dropped. */
const HELLO_TIMEOUT_MS = 10_000;
/** A lone broker shutting down asks an agent that dials it then to try again after this long. */
const LEAVING_RETRY_MS = 5000;

interface ConnectHandlerOptions {
  store: BrokerStore;
  /** The fleet's CAs: a certificate of a CA rotated out is refused in words. */
  authority: FleetAuthority;
  registry: AgentRegistry;
  enrollment: Enrollment;
  heartbeatIntervalMs: number;
  log: Logger;
  /** Once the broker is shutting down, where its agents go instead (empty alone): a stream opened then is sent there. */
  leaving?: () => readonly string[] | undefined;
}

/** Who is on the other end of a stream, from the verified client certificate only. */
async function authenticate(
  call: ServerCall<AgentFrame, BrokerFrame>,
  store: BrokerStore,
  authority: FleetAuthority,
): Promise<{ agentId: string; serial: string; caPin: string; agent: AgentRow }> {
  const certificate = call.getAuthContext().sslPeerCertificate;
  if (!certificate) {
    // The server exposes a peer certificate only when Node's TLS verified it
    // against our CA: none presented, another CA's, or an expired one all end here.
    throw new FleetError(
      'forbidden',
      'a valid client certificate issued by this broker is required (none was presented, it has expired, or another CA issued it)',
      {
        hint: 'Enroll the agent with a join token from this broker: fleetmesh token create.',
        details: { authentication: true },
      },
    );
  }
  const agentId = agentIdFromAltNames(certificate.subjectaltname);
  const serial = normalizeSerial(certificate.serialNumber);
  const issued = await store.certificates.withRevocation(serial);
  if (!agentId || !issued || issued.agentId !== agentId) {
    throw new FleetError('forbidden', 'the client certificate was not issued to an agent of this broker', {
      hint: 'Enroll the agent again with a join token from this broker.',
      details: { authentication: true },
    });
  }
  const agent = await store.agents.get(agentId);
  if (issued.revokedAt !== null || !agent || agent.revokedAt !== null) {
    const when = new Date(issued.revokedAt ?? agent?.revokedAt ?? Date.now()).toISOString();
    throw new FleetError('forbidden', `the certificate of agent ${agent?.name ?? agentId} was revoked at ${when}`, {
      hint: 'A revoked agent cannot reconnect; enroll the host as a new agent if it should come back.',
    });
  }
  // TLS takes certificates of every CA the fleet had, so that one of a CA rotated out hears this rather than a failed handshake.
  const set = authority.set;
  const caPin = issued.caPin ?? set.active.pin;
  if (!set.isTrusted(caPin)) {
    const retiredAt = set.rows.find((row) => row.pin === caPin)?.retiredAt;
    throw new FleetError(
      'forbidden',
      `the certificate of agent ${agent.name} was issued by CA ${caPin}, which this fleet no longer trusts: the CA was rotated out${retiredAt ? ` at ${new Date(retiredAt).toISOString()}` : ''} while the agent was away`,
      { hint: 'Enroll the agent again: fleetmesh token create prints a join token and the current CA pin; with the same --data-dir it keeps its name.' },
    );
  }
  return { agentId, serial, caPin, agent };
}

function storedHello(hello: Hello): StoredHello {
  const facts = hello.facts ? factsFromWire(hello.facts) : {};
  return {
    agent_version: hello.agentVersion,
    protocol_version: hello.protocolVersion,
    actions: [...hello.actions].sort(),
    collectors: hello.collectors.map((c) => ({ name: c.name, available: c.available, reason: c.reason, ...(c.absent ? { absent: true } : {}) })),
    facts,
    started_unix_ms: Number(hello.startedUnixMs),
  };
}

/** Serves one agent's Connect stream from authentication to its end. */
export function createConnectHandler(options: ConnectHandlerOptions): StreamHandler<AgentFrame, BrokerFrame> {
  const { store, registry, enrollment, authority, log } = options;
  return async (call) => {
    // An unhandled 'error' on a stream kills the process (DESIGN §10).
    call.on('error', () => {});
    let identity: Awaited<ReturnType<typeof authenticate>>;
    try {
      // Frames wait in the stream (no 'data' listener yet) while the store answers.
      identity = await authenticate(call, store, authority);
    } catch (error) {
      const failure = toFleetError(error);
      log.warn('agent stream refused', { peer: call.getPeer(), reason: failure.message });
      call.emit('error', toGrpcStatus(failure));
      return;
    }
    if (call.cancelled) return;
    const session = new AgentSession(call, identity.agentId, identity.serial, identity.caPin);
    const elsewhere = options.leaving?.();
    if (elsewhere) {
      // Too late to hold it here: the agent goes where the agents this broker let go went, or comes back later alone.
      const address = elsewhere[Math.floor(Math.random() * elsewhere.length)];
      const reason = address ? `the broker is shutting down; reconnect to ${address}` : 'the broker is shutting down';
      session.send({ case: 'reconnect', value: create(ReconnectSchema, { delayMs: address ? 0 : LEAVING_RETRY_MS, reason, ...(address ? { address } : {}) }) });
      session.close();
      return;
    }
    let attached = false;
    const helloTimer = setTimeout(() => {
      if (!attached) session.close({ code: GrpcCode.DEADLINE_EXCEEDED, details: 'no Hello within 10 s of opening the stream' });
    }, HELLO_TIMEOUT_MS);
    const finish = (reason: string) => {
      clearTimeout(helloTimer);
      if (attached) registry.detach(session, reason);
      else session.markEnded();
    };
    call.on('end', () => {
      finish('stream ended');
      session.close();
    });
    call.on('cancelled', () => finish('stream cancelled'));
    call.on('close', () => finish('stream closed'));
    call.on('error', (status) => finish(`stream error: ${status.details ?? 'no details'}`));

    call.on('data', (frame: AgentFrame) => {
      switch (frame.frame.case) {
        case 'hello': {
          if (attached) {
            // A later Hello re-announces what changed (labels, collectors).
            const hello = frame.frame.value;
            registry.updateHello(session, storedHello(hello), { ...hello.labels });
            return;
          }
          const hello = frame.frame.value;
          // An agent too old for this broker hears why in the stream's status, which every agent version logs.
          const skew = versionSkew(hello.agentVersion, FLEETMESH_VERSION);
          if (skew.verdict === 'refuse') {
            clearTimeout(helloTimer);
            log.warn('agent stream refused', { peer: call.getPeer(), agent_id: identity.agentId, reason: skew.message });
            session.close(toGrpcStatus(new FleetError('unsupported', skew.message, { hint: 'Upgrade the agent; brokers first, then agents.' })));
            return;
          }
          if (skew.verdict === 'warn') log.warn(skew.message, { agent_id: identity.agentId });
          attached = true;
          clearTimeout(helloTimer);
          session.trustedCaPins = [...hello.trustedCaPins];
          // The agent's row as authentication just read it: one statement less per stream, thousands at a fleet's return.
          void registry.attach(session, storedHello(hello), { ...hello.labels }, identity.agent).then(
            (host) => {
              if (!host) return;
              session.send({
                case: 'welcome',
                value: create(WelcomeSchema, {
                  sessionId: session.sessionId,
                  heartbeatIntervalMs: options.heartbeatIntervalMs,
                  agentId: host.id,
                  name: host.name,
                  serverTimeUnixMs: BigInt(Date.now()),
                }),
              });
              log.info('agent connected', { agent: host.name, agent_id: host.id, version: hello.agentVersion });
              // A CA rotation step it missed: the bundle to trust, and a renewal when its certificate is of the CA agents leave.
              const trust = trustUpdateFor(session, authority.set);
              if (trust) {
                session.send({ case: 'trust', value: trust });
                session.trustedCaPins = authority.set.trustedPins();
              }
            },
            (error: unknown) => {
              const failure = toFleetError(error);
              log.warn('agent stream refused', { peer: call.getPeer(), reason: failure.message });
              session.close(toGrpcStatus(failure));
            },
          );
          return;
        }
        case 'heartbeat':
          if (attached) registry.heartbeat(session, frame.frame.value.sample);
          return;
        case 'result':
          session.onResult(frame.frame.value);
          return;
        case 'chunk':
          try {
            session.onChunk(frame.frame.value);
          } catch (error) {
            // The call's own receiver failed (a client gone mid-progress): the call still settles by its result.
            log.warn('a streamed chunk could not be passed on', { agent_id: identity.agentId, error: (error as Error).message });
          }
          return;
        case 'report': {
          if (!attached) return;
          const report = frame.frame.value;
          try {
            registry.report(session, report.kind, JSON.parse(new TextDecoder().decode(report.payloadJson)), Number(report.observedUnixMs));
          } catch {
            // A report that is not JSON is dropped.
          }
          return;
        }
        case 'renewRequest': {
          const csrPem = frame.frame.value.csrPem;
          void (async () => {
            let response: ReturnType<typeof create<typeof RenewResponseSchema>>;
            try {
              const renewed = await enrollment.renew(identity.agentId, csrPem);
              session.caPin = renewed.caPin;
              await registry.refreshFromStore(identity.agentId);
              response = create(RenewResponseSchema, { certificatePem: renewed.certificatePem, notAfterUnixMs: BigInt(renewed.notAfter.getTime()) });
            } catch (error) {
              response = create(RenewResponseSchema, { error: toFleetError(error).message });
            }
            session.send({ case: 'renewResponse', value: response });
          })();
          return;
        }
        default:
          return;
      }
    });
  };
}

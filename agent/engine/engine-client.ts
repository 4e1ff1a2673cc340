import { existsSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import type Docker from 'dockerode';
import { ENGINE_ABSENT } from './engine-errors.ts';

/**
 * The slice of dockerode the agent's collectors use, handed to each through
 * its plug-in context (`context.engine`). Each collector takes the narrower
 * `Pick` of it that it calls, so a unit test passes a fake engine and the
 * agent passes dockerode (or the lazy client below).
 */
export type EngineClient = Pick<
  Docker,
  | 'version'
  | 'listContainers'
  | 'listVolumes'
  | 'listImages'
  | 'listNetworks'
  | 'getContainer'
  | 'getVolume'
  | 'getImage'
  | 'getNetwork'
  | 'createContainer'
  | 'createVolume'
  | 'pull'
  | 'pruneImages'
  | 'getEvents'
  | 'modem'
>;

let dockerode: typeof Docker | undefined;

/**
 * dockerode, without the two parts of it fleetmesh never reaches, which it
 * loads eagerly: docker-modem's SSH transport (ssh2, which instantiates a
 * WebAssembly module with 16 MiB of memory as it loads) and dockerode's
 * BuildKit session for buildImage (a second gRPC stack with protobufjs).
 * Together they were 14 MiB of an idle agent's RSS and a fifth of the modules
 * it loaded (docs/performance.md). Each is put in the module cache, before
 * dockerode is required, as a stub that throws if it is ever called.
 */
function loadDockerode(): typeof Docker {
  if (dockerode) return dockerode;
  const require = createRequire(import.meta.url);
  const main = require.resolve('dockerode');
  const modem = createRequire(main).resolve('docker-modem');
  const unused = [
    { path: createRequire(main).resolve('./session.js'), what: "dockerode's BuildKit session" },
    { path: createRequire(modem).resolve('./ssh.js'), what: 'Docker over SSH' },
  ];
  for (const { path, what } of unused) {
    if (require.cache[path]) continue;
    const stub = new Module(path);
    stub.filename = path;
    stub.loaded = true;
    stub.exports = () => {
      throw new Error(`${what} is not available in the fleetmesh agent`);
    };
    require.cache[path] = stub;
  }
  dockerode = require('dockerode') as typeof Docker;
  return dockerode;
}

/** The agent's one engine client, for a socket path, `unix://…`, or `tcp://host:port`: dockerode, or a lazy stand-in for it on a socket. */
export function createEngineClient(address: string): EngineClient {
  if (address.startsWith('tcp://') || address.startsWith('http://')) {
    const url = new URL(address.replace(/^tcp:/, 'http:'));
    return new (loadDockerode())({ host: url.hostname, port: Number(url.port || 2375), protocol: 'http' });
  }
  return socketEngineClient(address.replace(/^unix:\/\//, ''));
}

/**
 * A client for the engine's socket that loads dockerode only once the socket
 * exists: on a host without Docker, the calls collectors make without being
 * asked (version, the event stream, a dial of the modem) and the container
 * list the system collector's status and ports read fail as dockerode's would,
 * with the socket's ENOENT, and dockerode's 4 MiB stay out of the idle agent
 * (docs/performance.md). Once the socket appears, every call is dockerode's.
 * Until then its refusals say the engine is absent (`engineAbsent`): a socket
 * that was there once and went away is an engine that failed, not one this
 * host never had.
 */
function socketEngineClient(socketPath: string): EngineClient {
  let docker: Docker | undefined;
  const refusal = () =>
    Object.assign(new Error(`connect ENOENT ${socketPath}`), { code: 'ENOENT', syscall: 'connect', address: socketPath, [ENGINE_ABSENT]: true });
  const probes: Record<PropertyKey, unknown> = {
    version: () => Promise.reject(refusal()),
    listContainers: () => Promise.reject(refusal()),
    getEvents: () => Promise.reject(refusal()),
    modem: { dial: (_options: unknown, callback: (error: unknown) => void) => queueMicrotask(() => callback(refusal())) },
  };
  let seen = false;
  return new Proxy({} as Docker, {
    get(_target, property) {
      if (!seen && property in probes) {
        if (!existsSync(socketPath)) return probes[property];
        seen = true;
      }
      docker ??= new (loadDockerode())({ socketPath });
      const value: unknown = Reflect.get(docker, property);
      return typeof value === 'function' ? value.bind(docker) : value;
    },
  });
}

/**
 * A private image registry for a test: Debian's docker-registry (the
 * distribution project's registry) on a port of its own at `host`, over TLS
 * with a CA made for it, asking every client for a login (basic auth from an
 * htpasswd file of bcrypt entries, written by apache2-utils' htpasswd). The
 * engine trusts the CA through `/etc/docker/certs.d/HOST:PORT/ca.crt`, an
 * entry of this registry's own that `stop()` removes. `host` is not a
 * loopback address: the engine treats 127.0.0.0/8 as an insecure registry
 * and, when HTTPS fails there (a login refused), tries plain HTTP and reports
 * that failure instead, which would hide what a real registry answers. The
 * private engine's bridge gateway is a local address of the run's own.
 * `stop()` ends the process and removes everything it wrote.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { createCertificateAuthority, createKeyPair, issueServerCertificate } from '../../shared/pki/certificates.ts';
import { freePort } from './free-port.ts';
import { makeTempDir } from './temp-dir.ts';
import { waitFor } from './wait.ts';

const REGISTRY = '/usr/bin/docker-registry';
const HTPASSWD = '/usr/bin/htpasswd';
/** Where the engine (running as root) looks for the CAs of a registry it reaches over TLS. */
const CERTS_D = '/etc/docker/certs.d';

export interface PrivateRegistry {
  /** `HOST:PORT`, the first part of the references of its images. */
  address: string;
  username: string;
  password: string;
  /** The engine's login for a push or pull, as X-Registry-Auth carries it. */
  auth: { username: string; password: string; serveraddress: string };
  stop(): Promise<void>;
}

/** The status the registry answers /v2/ with (401 once it listens and asks for a login). */
function probe(host: string, port: number, ca: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host, port, path: '/v2/', ca, timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

export async function startPrivateRegistry(host: string, username: string, password: string): Promise<PrivateRegistry> {
  for (const [binary, pkg] of [
    [REGISTRY, 'docker-registry'],
    [HTPASSWD, 'apache2-utils'],
  ]) {
    if (!existsSync(binary as string)) throw new Error(`${binary} is missing: apt-get install -y ${pkg} (scripts/test-packages.sh does)`);
  }
  const temp = makeTempDir('fm-registry-');
  const port = await freePort();
  const authority = await createCertificateAuthority({ commonName: 'fleetmesh test registry CA', lifetimeMs: 86_400_000 });
  const keys = await createKeyPair();
  const server = issueServerCertificate(authority, { publicKeyPem: keys.publicKeyPem, names: [host], lifetimeMs: 86_400_000 });
  writeFileSync(join(temp.path, 'server.crt'), server.certificatePem);
  writeFileSync(join(temp.path, 'server.key'), keys.privateKeyPem, { mode: 0o600 });
  // -B: bcrypt, the only hash the registry accepts; -b: the password from the command line, -n: to stdout.
  writeFileSync(join(temp.path, 'htpasswd'), execFileSync(HTPASSWD, ['-Bbn', username, password]));
  writeFileSync(
    join(temp.path, 'config.yml'),
    [
      'version: 0.1',
      'log:',
      '  level: warn',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(temp.path, 'data')}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: ${host}:${port}`,
      '  tls:',
      `    certificate: ${join(temp.path, 'server.crt')}`,
      `    key: ${join(temp.path, 'server.key')}`,
      'auth:',
      '  htpasswd:',
      '    realm: fleetmesh-test',
      `    path: ${join(temp.path, 'htpasswd')}`,
      '',
    ].join('\n'),
  );
  const address = `${host}:${port}`;
  const trust = join(CERTS_D, address);
  const madeCertsD = !existsSync(CERTS_D);
  mkdirSync(trust, { recursive: true });
  writeFileSync(join(trust, 'ca.crt'), authority.certificatePem);
  const log = join(temp.path, 'registry.log');
  const child: ChildProcess = spawn(REGISTRY, ['serve', join(temp.path, 'config.yml')], { stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')] });
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    rmSync(trust, { recursive: true, force: true });
    // certs.d itself goes too when this made it and no other run's registry is in it.
    if (madeCertsD) {
      try {
        rmdirSync(CERTS_D);
      } catch {
        // another run's entry is in it
      }
    }
    temp.remove();
  };
  try {
    await waitFor(async () => child.exitCode === null && (await probe(host, port, authority.certificatePem)) === 401, {
      what: 'docker-registry to ask for a login',
    });
  } catch (error) {
    const output = readFileSync(log, 'utf8').slice(-2000);
    await stop();
    throw new Error(`docker-registry did not come up (${(error as Error).message}):\n${output}`);
  }
  return { address, username, password, auth: { username, password, serveraddress: address }, stop };
}

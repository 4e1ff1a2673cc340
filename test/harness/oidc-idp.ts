import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ClientMetadata } from 'oidc-provider';
import { freePort } from './free-port.ts';
import { waitFor } from './wait.ts';

const RUN_TS = fileURLToPath(new URL('../../bin/run-ts.js', import.meta.url));
const PROCESS = fileURLToPath(new URL('./oidc-idp-process.ts', import.meta.url));

/** An external OpenID provider in a process of its own (oidc-idp-process.ts), on a loopback port. */
export interface OidcIdp {
  issuer: string;
  stop(): Promise<void>;
}

/**
 * Starts the provider with these people (login name → email and groups) and
 * pre-registered clients (the broker's, when it signs people in through it),
 * resolving once it listens. Stop it in afterAll.
 */
export async function startOidcIdp(options: { people: Record<string, { email: string; groups: string[] }>; clients?: ClientMetadata[] }): Promise<OidcIdp> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [RUN_TS, PROCESS, '--port', String(port), '--people', JSON.stringify(options.people), '--clients', JSON.stringify(options.clients ?? [])],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (data: Buffer) => {
    output += data.toString();
  });
  child.stderr.on('data', (data: Buffer) => {
    output += data.toString();
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  await waitFor(() => output.includes('listening ') || child.exitCode !== null, { what: `the OpenID provider listening (output: ${output})` });
  if (child.exitCode !== null) throw new Error(`the OpenID provider exited: ${output}`);
  return {
    issuer: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

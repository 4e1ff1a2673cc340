/**
 * A private PostgreSQL server (DESIGN §9, §11): `initdb` into a temporary
 * directory and `pg_ctl` on a port of its own on 127.0.0.1, run as the
 * `postgres` user when the tests run as root (initdb refuses root). One
 * server per test run is vitest's global setup (tests read its URL with
 * inject('postgresUrl') and take a fresh database each); a test that stops
 * the server starts one of its own.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { freePort } from './free-port.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export interface PostgresServer {
  /** The URL of its `postgres` database, as the superuser `postgres` (trust authentication on loopback). */
  url: string;
  /** A new empty database; drop it with the returned function. */
  createDatabase(): Promise<{ url: string; drop(): Promise<void> }>;
  /** Stops the server (immediately, as a crash would) and keeps its data. */
  halt(): void;
  /** Starts it again on the same port and data. */
  resume(): void;
  stop(): void;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error('PostgreSQL is not installed: run bash scripts/test-packages.sh (apt-get install -y postgresql)');
  return join(root, newest, 'bin');
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = binDir();
  const root = mkdtempSync('/tmp/fleetmesh-pg-');
  // The postgres user must reach its data dir through this directory.
  chmodSync(root, 0o711);
  const dataDir = join(root, 'data');
  const socketDir = join(root, 'socket');
  const asRoot = process.getuid?.() === 0;
  for (const dir of [dataDir, socketDir]) {
    mkdirSync(dir, { mode: 0o700 });
    if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  }
  const run = (tool: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { stdio: 'pipe' })
      : execFileSync(join(bin, tool), args, { stdio: 'pipe' });
  run('initdb', ['-D', dataDir, '--auth=trust', '--username=postgres', '--encoding=UTF8', '--locale=C']);
  const port = await freePort();
  const options = `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const resume = () => run('pg_ctl', ['-D', dataDir, '-o', options, '-l', join(socketDir, 'server.log'), '-w', '-t', '60', 'start']);
  const halt = () => run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
  resume();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    createDatabase: () => freshDatabase(url),
    halt,
    resume,
    stop() {
      try {
        halt();
      } catch {
        // not running
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A fresh database on the run's server, for one test file. */
export async function freshDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const port = new URL(url).port;
  const name = `fm_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${name}`,
    async drop() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

export default async function setup(project: TestProject): Promise<() => void> {
  const server = await startPostgres();
  project.provide('postgresUrl', server.url);
  return () => server.stop();
}

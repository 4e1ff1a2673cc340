import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { childProcess } from '../lazy-builtins.ts';

/**
 * What the engine takes in its X-Registry-Auth header for one pull: a login,
 * or the identity token a registry's OAuth flow left in the Docker config.
 */
export type RegistryAuth = { username: string; password: string; serveraddress: string } | { identitytoken: string; serveraddress: string };

/** A login found for a registry, and where it was found (said in answers; the secret never is). */
export interface FoundLogin {
  auth: RegistryAuth;
  /** The Docker config file or the credential helper (`docker-credential-NAME`) that held it. */
  source: string;
}

/** The part of a Docker config file (`config.json`) that says where registry logins are. */
interface DockerConfig {
  auths?: Record<string, { auth?: string; username?: string; password?: string; identitytoken?: string }>;
  credsStore?: string;
  credHelpers?: Record<string, string>;
}

/** The key Docker's own tools file Docker Hub's login under. */
const DOCKER_HUB_KEY = 'https://index.docker.io/v1/';
const HELPER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const HELPER_TIMEOUT_MS = 10_000;

/** The Docker config folder the agent reads logins from: the one given (--docker-config, DOCKER_CONFIG), else Docker's own default, `~/.docker`. */
export function dockerConfigDir(given: string | undefined): string {
  return given === undefined ? join(homedir(), '.docker') : resolve(given);
}

/** A config key (`https://host:5000/v1/`, `host:5000`) as the bare host Docker's tools compare. */
function hostOf(key: string): string {
  const host = key.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '');
  return host === 'index.docker.io' || host === 'registry-1.docker.io' ? 'docker.io' : host;
}

/**
 * The registry logins of the agent's host, read from its Docker config folder
 * (`--docker-config`, else DOCKER_CONFIG, else `~/.docker`) at every pull, as
 * `docker pull` would find them: a credential helper named for the registry
 * (`credHelpers`), then the default store (`credsStore`), then the file's own
 * `auths`. They are handed to the local engine for one pull and never leave
 * the host: no answer, log or chunk holds them.
 */
export class RegistryCredentials {
  readonly configFile: string;

  constructor(
    configDir: string,
    /** The environment credential helpers run in (their PATH finds them); the agent's own when not given. */
    private readonly helperEnv?: NodeJS.ProcessEnv,
  ) {
    this.configFile = join(configDir, 'config.json');
  }

  /** The login for a registry (`docker.io` or `HOST[:PORT]`), or undefined to pull anonymously. */
  async loginFor(registry: string): Promise<FoundLogin | undefined> {
    const config = await this.read();
    const serveraddress = registry === 'docker.io' ? DOCKER_HUB_KEY : registry;
    const helper = Object.entries(config.credHelpers ?? {}).find(([key]) => hostOf(key) === registry)?.[1] ?? config.credsStore;
    if (helper) {
      const found = await this.fromHelper(helper, serveraddress);
      if (found) return found;
    }
    const entry = Object.entries(config.auths ?? {}).find(([key]) => hostOf(key) === registry)?.[1];
    if (!entry) return undefined;
    if (entry.identitytoken) return { auth: { identitytoken: entry.identitytoken, serveraddress }, source: this.configFile };
    let { username, password } = entry;
    if (entry.auth) {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw this.unreadable(`the login of ${registry} is not base64 of USER:PASSWORD`);
      username = decoded.slice(0, colon);
      password = decoded.slice(colon + 1);
    }
    if (!username || password === undefined) return undefined;
    return { auth: { username, password, serveraddress }, source: this.configFile };
  }

  private async read(): Promise<DockerConfig> {
    let text: string;
    try {
      text = await readFile(this.configFile, 'utf8');
    } catch (error) {
      // No Docker config on this host: every pull is anonymous, as docker pull's would be.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw this.unreadable((error as Error).message);
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('it is not a JSON object');
      return parsed as DockerConfig;
    } catch (error) {
      throw this.unreadable((error as Error).message);
    }
  }

  /** Asks `docker-credential-NAME get` (no shell, the server address on stdin), as Docker's tools do; undefined when it holds none. */
  private fromHelper(name: string, serveraddress: string): Promise<FoundLogin | undefined> {
    if (!HELPER_NAME.test(name)) return Promise.reject(this.unreadable(`"${name}" is not a credential helper name`));
    const program = `docker-credential-${name}`;
    return new Promise((resolve, reject) => {
      const child = childProcess().execFile(
        program,
        ['get'],
        { timeout: HELPER_TIMEOUT_MS, maxBuffer: 64 * 1024, ...(this.helperEnv ? { env: this.helperEnv } : {}) },
        (error, stdout) => {
          if (error) {
            // The helper knows no login for this registry (it says so on stdout and exits 1): pull without one.
            if (/credentials not found/i.test(`${stdout}`)) return resolve(undefined);
            const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? `${program} is not on the agent's PATH` : `${program} failed`;
            return reject(
              new FleetError('collector_failed', `the registry login for ${serveraddress} cannot be read: ${why}`, {
                hint: `Install ${program} for the agent's user, or remove it from ${this.configFile}.`,
              }),
            );
          }
          try {
            const answer = JSON.parse(stdout) as { Username?: string; Secret?: string };
            if (!answer.Secret) return resolve(undefined);
            // Docker's tools store an identity token under the user name "<token>".
            const auth: RegistryAuth =
              answer.Username === '<token>'
                ? { identitytoken: answer.Secret, serveraddress }
                : { username: answer.Username ?? '', password: answer.Secret, serveraddress };
            resolve({ auth, source: program });
          } catch {
            reject(new FleetError('collector_failed', `${program} answered something that is not a login`, { hint: `Check ${program} on that host.` }));
          }
        },
      );
      child.stdin?.end(serveraddress);
    });
  }

  private unreadable(why: string): FleetError {
    return new FleetError('collector_failed', `the Docker config ${this.configFile} cannot be read: ${why}`, {
      hint: "Fix the file on that host, or point the agent's --docker-config (DOCKER_CONFIG) at the folder that holds the right one.",
    });
  }
}

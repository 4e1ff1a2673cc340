import { readFileSync } from 'node:fs';
import { proxmoxFailure } from './proxmox-failure.ts';

/** `USER@REALM!TOKENID=SECRET`, as `pveum user token add` prints its parts. */
const TOKEN_LINE = /^([^\s@:!=]+@[A-Za-z][A-Za-z0-9.\-_]*![A-Za-z][A-Za-z0-9.\-_]*)=([^\s=]+)$/;

/**
 * A Proxmox VE API token. Its id (`USER@REALM!TOKENID`) is not secret and may be
 * named in messages; its secret leaves this object only inside the
 * Authorization header, and never through String(), JSON or a log field.
 */
export class ApiToken {
  readonly #secret: string;

  constructor(
    readonly id: string,
    secret: string,
  ) {
    this.#secret = secret;
  }

  /** The Authorization header value Proxmox VE expects for a token. */
  authorization(): string {
    return `PVEAPIToken=${this.id}=${this.#secret}`;
  }

  /** Replaces the secret wherever it appears in text that is about to leave the collector. */
  redact(text: string): string {
    return text.replaceAll(this.#secret, '<secret>');
  }

  toString(): string {
    return this.id;
  }

  toJSON(): string {
    return this.id;
  }
}

/** Parses a token file's text; the error never quotes the text, which holds the secret. */
export function parseApiToken(text: string, where: string): ApiToken {
  const match = TOKEN_LINE.exec(text.trim());
  if (!match) {
    throw proxmoxFailure('configuration', `${where} does not hold one line USER@REALM!TOKENID=SECRET`, {
      hint: 'Write the token id and its secret into the file, such as fleetmesh@pve!read=<the secret pveum user token add printed>.',
    });
  }
  return new ApiToken(match[1] as string, match[2] as string);
}

/** Reads a token file afresh (so a rotated token is picked up without a restart). `flag` names where the path came from. */
export function readApiToken(path: string, flag: string): ApiToken {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'may not be read by the agent' : `cannot be read (${code ?? 'error'})`;
    throw proxmoxFailure('configuration', `the token file ${path} (${flag}) ${reason}`, {
      hint: `Fix the file or ${flag}; it holds USER@REALM!TOKENID=SECRET and should be readable by the agent's user only.`,
    });
  }
  return parseApiToken(text, `the token file ${path} (${flag})`);
}

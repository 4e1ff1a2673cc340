import { FleetError } from '../../shared/errors/fleet-error.ts';

/** An image reference taken apart the way the engine reads it: which registry, which repository, which tag or digest. */
export interface ImageReference {
  /** The registry the engine pulls from: `docker.io`, or `HOST[:PORT]`. */
  readonly registry: string;
  /** The repository inside that registry (`library/nginx`, `team/app`). */
  readonly repository: string;
  readonly tag: string | undefined;
  /** `sha256:…`, when the reference pins one. */
  readonly digest: string | undefined;
  /** The reference as it was written, with `:latest` added when it names neither tag nor digest. */
  readonly text: string;
}

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}$/;
const REGISTRY = /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::\d{1,5})?$/;

function refused(text: string, why: string): FleetError {
  return new FleetError('invalid_argument', `"${text}" is not an image reference: ${why}`, {
    hint: 'Write it as the engine does: [REGISTRY/]REPOSITORY[:TAG][@sha256:DIGEST], such as nginx:1.27 or registry.example.com:5000/team/app:2.',
  });
}

/**
 * Reads an image reference by the engine's own rules: the first part names a
 * registry when it holds a dot or a port or is `localhost`, else the image is
 * Docker Hub's (`library/` for a one-part name). Anything else (a leading `-`,
 * spaces, upper case in the repository) is refused before the engine sees it.
 */
export function parseImageReference(text: string): ImageReference {
  if (text.length === 0 || text.length > 512) throw refused(text, 'it is empty or longer than 512 characters');
  const at = text.indexOf('@');
  const named = at >= 0 ? text.slice(0, at) : text;
  const digest = at >= 0 ? text.slice(at + 1) : undefined;
  if (digest !== undefined && !DIGEST.test(digest)) throw refused(text, 'its digest is not ALGORITHM:HEX');
  const slash = named.indexOf('/');
  const first = slash >= 0 ? named.slice(0, slash) : '';
  const hasRegistry = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost' || first.startsWith('['));
  const registry = hasRegistry ? first : 'docker.io';
  if (hasRegistry && !REGISTRY.test(registry)) throw refused(text, `"${registry}" is not a registry host`);
  let path = hasRegistry ? named.slice(slash + 1) : named;
  let tag: string | undefined;
  const colon = path.lastIndexOf(':');
  if (colon > path.lastIndexOf('/')) {
    tag = path.slice(colon + 1);
    path = path.slice(0, colon);
    if (!TAG.test(tag)) throw refused(text, `"${tag}" is not a tag`);
  }
  const components = path.split('/');
  if (components.some((component) => !COMPONENT.test(component))) throw refused(text, 'its repository must be lower-case letters, digits and separators');
  const repository = registry === 'docker.io' && components.length === 1 ? `library/${path}` : path;
  return { registry, repository, tag, digest, text: tag === undefined && digest === undefined ? `${text}:latest` : text };
}

/** The same repository with another tag (a pinned digest is dropped, since it names the old image). */
export function withTag(reference: ImageReference, tag: string): ImageReference {
  const base = reference.text.replace(/@.*$/, '').replace(/:[^:/]*$/, '');
  return parseImageReference(`${base}:${tag}`);
}

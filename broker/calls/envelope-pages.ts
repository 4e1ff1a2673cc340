import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { FleetEnvelope } from '../fanout/merge.ts';

/**
 * The most one page may weigh in a model's context (o200k tokens): under the
 * 25,000 tokens Claude Code accepts in one tool result.
 */
const PAGE_TOKENS = 24_000;
/** Below this many bytes of JSON (UTF-8) an answer cannot reach PAGE_TOKENS (a token is at least a byte), so nothing is counted. */
const SURELY_FITS_BYTES = PAGE_TOKENS;

interface EnvelopePage {
  number: number;
  of: number;
  /** The first and last host of this page. */
  first_host: string;
  last_host: string;
}

type PagedEnvelope = FleetEnvelope & { page?: EnvelopePage; next_cursor?: string };

/** A cursor names the host a page starts after, so pages stay put when hosts come and go. */
function cursorAfter(host: string): string {
  return Buffer.from(JSON.stringify({ after: host })).toString('base64url');
}

function hostAfter(cursor: string): string {
  try {
    const after = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown }).after;
    if (typeof after === 'string') return after;
  } catch {}
  throw new FleetError('invalid_argument', 'cursor is not one this broker gave', {
    hint: 'Call again without cursor for the first page, then pass the next_cursor of each answer.',
  });
}

/** Splits nodes into runs whose JSON stays within budget tokens each (a host heavier than that is a page of its own). */
function split(weights: number[], budget: number): [number, number][] {
  const pages: [number, number][] = [];
  let start = 0;
  let sum = 0;
  weights.forEach((weight, index) => {
    if (index > start && sum + weight > budget) {
      pages.push([start, index]);
      start = index;
      sum = 0;
    }
    sum += weight;
  });
  if (weights.length) pages.push([start, weights.length]);
  return pages;
}

/**
 * The page of a fleet answer a call asked for: every host when they fit in one
 * result, otherwise the hosts of one page, with which page it is and the
 * cursor of the next. targeted, responded and errors always describe the whole call.
 */
export function pageOfEnvelope(envelope: FleetEnvelope, cursor: string | undefined): PagedEnvelope {
  const after = cursor === undefined ? undefined : hostAfter(cursor);
  // Bytes, not characters: some scripts take three tokens a character.
  if (after === undefined && Buffer.byteLength(JSON.stringify(envelope.hosts)) <= SURELY_FITS_BYTES) return envelope;
  const weights = envelope.hosts.map((node) => encode(JSON.stringify(node)).length);
  // The counts and every error come with each page; the hosts share what is left.
  const budget = PAGE_TOKENS - encode(JSON.stringify({ ...envelope, hosts: [] })).length - 100;
  const start = after === undefined ? 0 : envelope.hosts.findIndex((node) => node.host.localeCompare(after) > 0);
  if (start < 0) return { ...envelope, hosts: [] };
  const before = split(weights.slice(0, start), budget).length;
  const rest = split(weights.slice(start), budget);
  if (before === 0 && rest.length <= 1) return envelope;
  const [from, to] = (rest[0] ?? [0, 0]).map((i) => i + start) as [number, number];
  const hosts = envelope.hosts.slice(from, to);
  const last = hosts.at(-1)?.host ?? '';
  return {
    ...envelope,
    hosts,
    page: { number: before + 1, of: before + rest.length, first_host: hosts[0]?.host ?? '', last_host: last },
    ...(rest.length > 1 ? { next_cursor: cursorAfter(last) } : {}),
  };
}

import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { type ErrorInfo, errorsBy, FleetError } from '../../shared/errors/fleet-error.ts';
import type { FleetEnvelope } from '../fanout/merge.ts';

/**
 * The most one page may weigh in a model's context (o200k tokens): under the
 * 25,000 tokens Claude Code accepts in one tool result.
 */
const PAGE_TOKENS = 24_000;
/** Below this many bytes of JSON (UTF-8) an answer cannot reach PAGE_TOKENS (a token is at least a byte), so nothing is counted. */
const SURELY_FITS_BYTES = PAGE_TOKENS;
/** How many hosts, evenly spread, are counted to estimate the others. */
const SAMPLED_HOSTS = 32;

interface EnvelopePage {
  number: number;
  of: number;
  /** The first and last host of this page. */
  first_host: string;
  last_host: string;
}

type PagedEnvelope = FleetEnvelope & { page?: EnvelopePage; next_cursor?: string; error_counts?: Record<string, number> };

/** A cursor names the host a page starts after, so pages stay put when hosts come and go, and the number of the page it ended. */
function cursorAfter(host: string, page: number): string {
  return Buffer.from(JSON.stringify({ after: host, page })).toString('base64url');
}

function readCursor(cursor: string): { after: string; page: number | undefined } {
  try {
    const { after, page } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown; page?: unknown };
    if (typeof after === 'string') return { after, page: Number.isSafeInteger(page) && (page as number) > 0 ? (page as number) : undefined };
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
 * Failures heavier than this (JSON bytes, a bound on their tokens) do not
 * come whole with every page: a fleet call while a thousand agents are
 * offline has a thousand, 50,000 tokens and more. Each page then carries
 * the failures of its own hosts, and `error_counts` counts the whole call's
 * by code.
 */
const ERRORS_ON_EVERY_PAGE_BYTES = 6_000;

/** How many of a call's failures have each code. */
function countsByCode(errors: readonly ErrorInfo[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const error of errors) counts[error.code] = (counts[error.code] ?? 0) + 1;
  return counts;
}

/**
 * The page of a fleet answer a call asked for: every host when they fit in one
 * result, otherwise the hosts of one page, with which page it is and the
 * cursor of the next. targeted and responded always describe the whole call,
 * and so do errors unless they are too many to come with every page
 * (ERRORS_ON_EVERY_PAGE_BYTES).
 *
 * Pages are planned on estimates and only the page that goes out is counted
 * exactly: counting every host of a large fleet answer (2,000 hosts' container
 * lists are 9 MB of JSON) held the broker's event loop for half a second a
 * call, long enough, with a few such calls at once, for agents to miss their
 * heartbeats. A host's estimate is its length times the most tokens a
 * character that an even sample of the hosts takes, so pages err small; a
 * page whose exact count is still over the budget gives up its last hosts to
 * the next page.
 */
export function pageOfEnvelope(envelope: FleetEnvelope, cursor: string | undefined): PagedEnvelope {
  const read = cursor === undefined ? undefined : readCursor(cursor);
  const after = read?.after;
  const errorBytes = Buffer.byteLength(JSON.stringify(envelope.errors));
  const errorsApart = errorBytes > ERRORS_ON_EVERY_PAGE_BYTES;
  const errorsOf = errorsApart ? errorsBy(envelope.errors, (error) => error.host ?? '') : new Map<string, ErrorInfo[]>();
  // A host's weight: its node, and with errors apart the failures it brings to its page.
  const texts = envelope.hosts.map((node) => {
    const own = errorsOf.get(node.host);
    return own ? `${JSON.stringify(node)}${JSON.stringify(own)}` : JSON.stringify(node);
  });
  // Bytes, not characters: some scripts take three tokens a character.
  const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text) + 1, 1) + (errorsApart ? 0 : errorBytes);
  if (after === undefined && bytes <= SURELY_FITS_BYTES) return envelope;
  const step = Math.max(1, Math.floor(texts.length / SAMPLED_HOSTS));
  let tokensPerChar = 0;
  for (let i = 0; i < texts.length; i += step) {
    const text = texts[i] as string;
    tokensPerChar = Math.max(tokensPerChar, encode(text).length / Math.max(1, text.length));
  }
  const estimates = texts.map((text) => Math.ceil(text.length * tokensPerChar));
  // The counts (and every error, unless apart) come with each page; the hosts share what is left.
  const counts = errorsApart ? { errors: [], error_counts: countsByCode(envelope.errors) } : {};
  const budget = PAGE_TOKENS - encode(JSON.stringify({ ...envelope, hosts: [], ...counts })).length - 100;
  const start = after === undefined ? 0 : envelope.hosts.findIndex((node) => node.host.localeCompare(after) > 0);
  if (start < 0) return { ...envelope, hosts: [], ...counts };
  const rest = split(estimates.slice(start), budget);
  const [from, planned] = (rest[0] ?? [0, 0]).map((i) => i + start) as [number, number];
  // The exact count of what goes out; past the budget, the page ends earlier (never before its first host).
  const exact = texts.slice(from, planned).map((text) => encode(text).length);
  let to = planned;
  let total = exact.reduce((sum, tokens) => sum + tokens, 0);
  while (to - from > 1 && total > budget) {
    to -= 1;
    total -= exact[to - from] as number;
  }
  if (start === 0 && to === envelope.hosts.length) return envelope;
  const hosts = envelope.hosts.slice(from, to);
  const last = hosts.at(-1)?.host ?? '';
  const more = to < envelope.hosts.length;
  // The page's number is carried by the cursor; how many follow is estimated.
  const number = start === 0 ? 1 : (read?.page ?? split(estimates.slice(0, start), budget).length) + 1;
  return {
    ...envelope,
    hosts,
    ...(errorsApart ? { errors: hosts.flatMap((node) => errorsOf.get(node.host) ?? []), error_counts: counts.error_counts } : {}),
    page: { number, of: number + (more ? split(estimates.slice(to), budget).length : 0), first_host: hosts[0]?.host ?? '', last_host: last },
    ...(more ? { next_cursor: cursorAfter(last, number) } : {}),
  };
}

import type { CallTool, ToolAnswer } from '../call-tool.ts';

/** Who signed in, as GET/POST /api/session answers it (the CSRF token only at sign-in). */
export interface Me {
  identity: string;
  level: number;
  effective_level: number;
  csrf_token?: string;
  tools: { tool: string; risk: 'read' | 'write' | 'destructive'; level: number }[];
  audit: boolean;
  /** Whether this identity manages join tokens and identities (level 3; the broker refuses the others). */
  admin: boolean;
  /** Whether some calls wait for a second person, and this identity may see and decide them. */
  approvals: boolean;
}

/** A call waiting for a second person, as GET /api/approvals lists it. */
export interface Approval {
  id: string;
  identity: string;
  tool: string;
  level: number;
  targets: string[];
  arguments: Record<string, unknown>;
  createdAt: number;
  expiresAt: number;
  /** Not this identity's own call, and within its level. */
  may_decide: boolean;
}

export class SignedOut extends Error {}

/** One step of a call in flight, as the broker's progress notifications carry it: hosts settled of hosts targeted, and what just happened. */
export interface CallStep {
  progress: number;
  total?: number;
  message: string;
}

/** What a call answers when the broker could not be reached: its outcome is unknown. */
function unanswered(error: Error): ToolAnswer {
  return {
    is_error: true,
    error: {
      code: 'unavailable',
      message: error.message,
      hint: 'The broker may be restarting or the network dropped; whether a change ran is unknown until the audit log says so.',
    },
  };
}

/** A request to the broker; a network failure (the broker restarting, a dropped link) says so in its message. */
async function send(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, { credentials: 'same-origin', ...init });
  } catch (error) {
    throw new Error(`no answer from the broker (${(error as Error).message}); it may be restarting`);
  }
}

/**
 * The page's half of its session: the CSRF token sign-in gave, in this
 * origin's storage. A browser sends the session cookie to every port of the
 * host, but storage belongs to one origin, port included, so nothing served
 * elsewhere can read this half; every request sends it, and the broker answers
 * none without it. Storage outlives a reload and is shared by the origin's tabs.
 */
const CSRF_KEY = 'fleetmesh.csrf';

function csrf(): string {
  return localStorage.getItem(CSRF_KEY) ?? '';
}

function forgetCsrf(): void {
  localStorage.removeItem(CSRF_KEY);
}

async function json(response: Response): Promise<Record<string, unknown>> {
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.status === 401) {
    forgetCsrf();
    throw new SignedOut((body.error as { message?: string } | undefined)?.message ?? 'signed out');
  }
  if (!response.ok) throw new Error((body.error as { message?: string } | undefined)?.message ?? `HTTP ${response.status}`);
  return body;
}

/**
 * The console's link to its broker. The session is two halves: an id in an
 * HttpOnly cookie the page cannot read, and the CSRF token kept in the
 * origin's storage and sent as a header with every request.
 */
export class ConsoleApi {
  /** The tools that only read, which may be sent again. */
  private reads = new Set<string>();

  /** Who is signed in, or undefined: none, or this page's half of the session is gone or belongs to an older one. */
  async session(): Promise<Me | undefined> {
    if (!csrf()) return undefined;
    try {
      const response = await send('/api/session', { headers: { 'x-fleetmesh-csrf': csrf() } });
      if (response.status === 403) {
        forgetCsrf();
        return undefined;
      }
      return this.remember((await json(response)) as unknown as Me);
    } catch (error) {
      if (error instanceof SignedOut) return undefined;
      throw error;
    }
  }

  async signIn(token: string): Promise<Me> {
    const response = await send('/api/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    return this.remember((await json(response)) as unknown as Me);
  }

  async signOut(): Promise<void> {
    await send('/api/session', { method: 'DELETE', headers: { 'x-fleetmesh-csrf': csrf() } });
    forgetCsrf();
  }

  /**
   * One tool call. A read that loses its connection (the browser drops every
   * socket when the machine's network changes; a broker restarts) is sent once
   * more; a change is not, as it may have run. A broker that still cannot be
   * reached is an error answer, not an exception, so that pages which poll (log
   * follow, charts) show it and try again; a session that ended throws SignedOut.
   */
  readonly call: CallTool = async (tool, args) => {
    const attempt = () =>
      send('/api/call', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-fleetmesh-csrf': csrf() },
        body: JSON.stringify({ tool, args }),
      }).catch((error: Error) => error);
    let response = await attempt();
    if (response instanceof Error && this.reads.has(tool)) response = await attempt();
    if (response instanceof Error) return unanswered(response);
    return (await json(response)) as unknown as ToolAnswer;
  };

  /**
   * A change, with its progress as the broker reports it (`onStep` for each
   * step, until the answer). Never sent twice: it may have run. The broker
   * answers a call refused before it ran with one JSON body, and a call that
   * ran with one line per step, then the answer's line.
   */
  async act(tool: string, args: Record<string, unknown>, onStep: (step: CallStep) => void): Promise<ToolAnswer> {
    let response: Response;
    try {
      response = await send('/api/call', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/x-ndjson, application/json', 'x-fleetmesh-csrf': csrf() },
        body: JSON.stringify({ tool, args }),
      });
    } catch (error) {
      return unanswered(error as Error);
    }
    if (!/^application\/x-ndjson\b/.test(response.headers.get('content-type') ?? '') || !response.body) {
      return (await json(response)) as unknown as ToolAnswer;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    let answer: ToolAnswer | undefined;
    try {
      // To the end, which the broker writes right after the answer's line.
      while (true) {
        const { done, value } = await reader.read();
        buffered += value ?? '';
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          if (line.trim() === '') continue;
          const item = JSON.parse(line) as { progress?: CallStep; answer?: ToolAnswer };
          if (item.answer) answer = item.answer;
          else if (item.progress) onStep(item.progress);
        }
        if (done) break;
      }
    } catch (error) {
      return answer ?? unanswered(error as Error);
    }
    return answer ?? unanswered(new Error('the broker ended the answer early'));
  }

  /** Audit rows, newest first, filtered by identity, tool, outcome and a time range (unix ms) as given. */
  async audit(filters: Record<string, string | number | undefined> = {}, limit = 200): Promise<Record<string, unknown>[]> {
    const query = new URLSearchParams({ limit: String(limit) });
    for (const [name, value] of Object.entries(filters)) if (value !== undefined && value !== '') query.set(name, String(value));
    return (await json(await send(`/api/audit?${query}`, { headers: { 'x-fleetmesh-csrf': csrf() } }))).rows as Record<string, unknown>[];
  }

  async approvals(): Promise<Approval[]> {
    return (await json(await send('/api/approvals', { headers: { 'x-fleetmesh-csrf': csrf() } }))).rows as Approval[];
  }

  /** Approves or denies a waiting call as this identity; rejects with the broker's reason when it may not. */
  async decide(id: string, decision: 'approve' | 'deny', reason: string): Promise<void> {
    await json(
      await send(`/api/approvals/${encodeURIComponent(id)}/${decision}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-fleetmesh-csrf': csrf() },
        body: JSON.stringify({ reason }),
      }),
    );
  }

  /**
   * The broker's own records, for level-3 identities: `GET kind` lists them,
   * `POST kind` creates one (its secret is in this answer only), `POST
   * kind/ID/revoke` revokes one. Rejects with the broker's reason.
   */
  async admin(kind: 'tokens' | 'identities', change?: { create: Record<string, unknown> } | { revoke: string }): Promise<Record<string, unknown>> {
    const path = change && 'revoke' in change ? `/api/admin/${kind}/${encodeURIComponent(change.revoke)}/revoke` : `/api/admin/${kind}`;
    const init: RequestInit = change
      ? {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-fleetmesh-csrf': csrf() },
          body: JSON.stringify('create' in change ? change.create : {}),
        }
      : { headers: { 'x-fleetmesh-csrf': csrf() } };
    return json(await send(path, init));
  }

  /** Calls `onChange` with the fleet:// resources that changed, as the broker reports them; returns a stop function. */
  changes(onChange: (uris: string[]) => void): () => void {
    // An EventSource sends no headers: the token goes in the query, to this origin only.
    const source = new EventSource(`/api/events?csrf=${encodeURIComponent(csrf())}`, { withCredentials: true });
    source.addEventListener('changed', (event) => onChange((JSON.parse((event as MessageEvent<string>).data) as { uris: string[] }).uris));
    return () => source.close();
  }

  private remember(me: Me): Me {
    if (me.csrf_token) localStorage.setItem(CSRF_KEY, me.csrf_token);
    this.reads = new Set(me.tools.filter((t) => t.risk === 'read').map((t) => t.tool));
    return me;
  }
}

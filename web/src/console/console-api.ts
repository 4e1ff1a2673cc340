import type { CallTool, ToolAnswer } from '../call-tool.ts';

/** Who signed in, as GET/POST /api/session answers it. */
export interface Me {
  identity: string;
  level: number;
  effective_level: number;
  csrf_token: string;
  tools: { tool: string; risk: 'read' | 'write' | 'destructive'; level: number }[];
  audit: boolean;
}

export class SignedOut extends Error {}

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

async function json(response: Response): Promise<Record<string, unknown>> {
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.status === 401) throw new SignedOut((body.error as { message?: string } | undefined)?.message ?? 'signed out');
  if (!response.ok) throw new Error((body.error as { message?: string } | undefined)?.message ?? `HTTP ${response.status}`);
  return body;
}

/**
 * The console's link to its broker. The session lives in an HttpOnly cookie the
 * page cannot read; the CSRF token is kept in this object's memory only, and
 * sent as a header with every mutating request.
 */
export class ConsoleApi {
  private csrf = '';
  /** The tools that only read, which may be sent again. */
  private reads = new Set<string>();

  async session(): Promise<Me | undefined> {
    try {
      return this.remember((await json(await send('/api/session', {}))) as unknown as Me);
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
    await send('/api/session', { method: 'DELETE', headers: { 'x-fleetmesh-csrf': this.csrf } });
    this.csrf = '';
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
        headers: { 'content-type': 'application/json', 'x-fleetmesh-csrf': this.csrf },
        body: JSON.stringify({ tool, args }),
      }).catch((error: Error) => error);
    let response = await attempt();
    if (response instanceof Error && this.reads.has(tool)) response = await attempt();
    if (response instanceof Error) return unanswered(response);
    return (await json(response)) as unknown as ToolAnswer;
  };

  async audit(limit = 200): Promise<Record<string, unknown>[]> {
    return (await json(await send(`/api/audit?limit=${limit}`, {}))).rows as Record<string, unknown>[];
  }

  /** Calls `onChange` with the fleet:// resources that changed, as the broker reports them; returns a stop function. */
  changes(onChange: (uris: string[]) => void): () => void {
    const source = new EventSource('/api/events', { withCredentials: true });
    source.addEventListener('changed', (event) => onChange((JSON.parse((event as MessageEvent<string>).data) as { uris: string[] }).uris));
    return () => source.close();
  }

  private remember(me: Me): Me {
    this.csrf = me.csrf_token;
    this.reads = new Set(me.tools.filter((t) => t.risk === 'read').map((t) => t.tool));
    return me;
  }
}

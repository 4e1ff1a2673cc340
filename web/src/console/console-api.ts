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

  async session(): Promise<Me | undefined> {
    try {
      return this.remember((await json(await fetch('/api/session', { credentials: 'same-origin' }))) as unknown as Me);
    } catch (error) {
      if (error instanceof SignedOut) return undefined;
      throw error;
    }
  }

  async signIn(token: string): Promise<Me> {
    const response = await fetch('/api/session', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    return this.remember((await json(response)) as unknown as Me);
  }

  async signOut(): Promise<void> {
    await fetch('/api/session', { method: 'DELETE', credentials: 'same-origin', headers: { 'x-fleetmesh-csrf': this.csrf } });
    this.csrf = '';
  }

  readonly call: CallTool = async (tool, args) => {
    const response = await fetch('/api/call', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-fleetmesh-csrf': this.csrf },
      body: JSON.stringify({ tool, args }),
    });
    return (await json(response)) as unknown as ToolAnswer;
  };

  async audit(limit = 200): Promise<Record<string, unknown>[]> {
    return (await json(await fetch(`/api/audit?limit=${limit}`, { credentials: 'same-origin' }))).rows as Record<string, unknown>[];
  }

  /** Calls `onChange` with the fleet:// resources that changed, as the broker reports them; returns a stop function. */
  changes(onChange: (uris: string[]) => void): () => void {
    const source = new EventSource('/api/events', { withCredentials: true });
    source.addEventListener('changed', (event) => onChange((JSON.parse((event as MessageEvent<string>).data) as { uris: string[] }).uris));
    return () => source.close();
  }

  private remember(me: Me): Me {
    this.csrf = me.csrf_token;
    return me;
  }
}

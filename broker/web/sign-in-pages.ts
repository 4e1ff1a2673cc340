import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseIdentityToken, TokenRefused, verifyBearerToken } from '../auth/identities.ts';
import type { RefusalAudit } from '../calls/refusal-audit.ts';
import { escapeHtml } from '../http/escape-html.ts';
import { readBody } from '../http/read-body.ts';
import type { AuthorizationServer, PendingAuthorization } from '../oauth/authorization-server.ts';
import type { UpstreamSignIn } from '../oauth/upstream-sign-in.ts';
import type { BrokerStore } from '../store/broker-store.ts';

export interface SignInPagesOptions {
  server: AuthorizationServer;
  /** The OpenID provider people may also sign in through, when the operator configured one. */
  upstream: UpstreamSignIn | undefined;
  store: BrokerStore;
  refusals: RefusalAudit;
  bodyTimeoutMs: number;
}

/** Where the console serves the pages of one pending authorization, and where the provider sends people back. */
export const SIGN_IN_PATH = '/oauth/sign-in/';
const CALLBACK_PATH = '/oauth/upstream/callback';
const STYLE_PATH = '/oauth/sign-in.css';

/**
 * The pages are the console's: nothing from another origin, no script, no
 * framing. A form posts back here and the answer redirects to the
 * authorization server (form-action is left out: browsers apply it to that
 * redirect and the client's redirect after it, which no list here can name).
 */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  // Not no-referrer: a browser then sends its form posts with Origin: null, which the console refuses.
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:30rem;margin:4rem auto;background:#fff;border-radius:8px;padding:2rem;box-shadow:0 1px 3px #0002}
h1{font-size:1.3rem;margin-top:0}code{background:#eef0f3;padding:0 .25rem;border-radius:3px;word-break:break-all}
label{display:block;margin:1rem 0 .3rem;font-weight:600}input{width:100%;box-sizing:border-box;padding:.5rem;font:inherit}
button,.button{display:inline-block;margin-top:1rem;padding:.5rem 1rem;border:0;border-radius:4px;background:#2557d6;color:#fff;font:inherit;text-decoration:none;cursor:pointer}
button.secondary{background:#e3e6eb;color:#1d2330}.error{color:#b3261e;font-weight:600}.or{margin-top:1.5rem;color:#5c6270}
dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem 1rem}dt{color:#5c6270}dd{margin:0}`;

/** The client as the page names it: its registered name is the client's own words, so it is quoted, with its id. */
const clientLabel = (pending: PendingAuthorization) =>
  pending.client.name
    ? `“${escapeHtml(pending.client.name)}” (<code>${escapeHtml(pending.client.id)}</code>)`
    : `<code>${escapeHtml(pending.client.id)}</code>`;

function page(res: ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' });
  res.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)} · fleetmesh</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${STYLE_PATH}"></head><body><main>${body}</main></body></html>`,
  );
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { ...PAGE_HEADERS, location });
  res.end();
}

/**
 * The sign-in and consent pages of the built-in authorization server, served
 * by the web console: someone signs in with an identity token, or through the
 * OpenID provider the operator configured, then allows (or denies) the client
 * that asked. A cross-site form cannot post here (the console refuses another
 * Origin), and a pending authorization is named by an id only the browser
 * that started it was given; the authorization server, where the browser goes
 * next, also checks that browser's own cookie.
 */
export class SignInPages {
  constructor(private readonly options: SignInPagesOptions) {}

  /** Serves the request when it is one of these pages; resolves false otherwise. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL, origin: string): Promise<boolean> {
    if (url.pathname === STYLE_PATH) {
      res.writeHead(200, { ...PAGE_HEADERS, 'content-type': 'text/css; charset=utf-8' });
      res.end(STYLE);
      return true;
    }
    if (url.pathname === CALLBACK_PATH) {
      await this.upstreamCallback(res, url, origin);
      return true;
    }
    if (!url.pathname.startsWith(SIGN_IN_PATH)) return false;
    const [uid = '', step] = url.pathname.slice(SIGN_IN_PATH.length).split('/');
    const pending = await this.options.server.pending(uid);
    if (!pending) {
      page(res, 404, 'Sign-in expired', '<h1>This sign-in expired</h1><p>Start again from the client that sent you here.</p>');
      return true;
    }
    if (step === 'upstream' && this.options.upstream && req.method === 'GET') {
      redirect(res, await this.options.upstream.start(uid, `${origin}${CALLBACK_PATH}`));
      return true;
    }
    if (req.method === 'POST') await this.submitted(req, res, pending);
    else this.show(res, pending);
    return true;
  }

  private show(res: ServerResponse, pending: PendingAuthorization, error?: string, status = 200): void {
    const problem = error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';
    if (pending.prompt === 'consent') {
      const who = pending.account?.name ?? 'you';
      const redirectHost = pending.client.redirectUri && URL.canParse(pending.client.redirectUri) ? new URL(pending.client.redirectUri).host : 'unknown';
      page(
        res,
        status,
        'Allow access',
        `<h1>Let this client act as ${escapeHtml(who)}?</h1>${problem}
<p>The client ${clientLabel(pending)} asks to use the fleet on your behalf, with what your level and grants allow.</p>
<dl><dt>Fleet</dt><dd><code>${escapeHtml(pending.resource)}</code></dd><dt>Scopes</dt><dd>${escapeHtml(pending.scopes.join(' ') || '(none)')}</dd><dt>Answers go to</dt><dd><code>${escapeHtml(redirectHost)}</code></dd></dl>
<form method="post"><button type="submit" name="step" value="approve">Allow</button> <button type="submit" name="step" value="deny" class="secondary">Deny</button></form>`,
      );
      return;
    }
    const upstream = this.options.upstream
      ? `<p class="or">Or</p><p><a class="button" href="${SIGN_IN_PATH}${escapeHtml(pending.uid)}/upstream">Sign in with ${escapeHtml(this.options.upstream.name)}</a></p>`
      : '';
    page(
      res,
      status,
      'Sign in',
      `<h1>Sign in to fleetmesh</h1>${problem}
<p>The client ${clientLabel(pending)} asks to use the fleet at <code>${escapeHtml(pending.resource)}</code> on your behalf.</p>
<form method="post"><input type="hidden" name="step" value="token"><label for="token">Identity token</label><input id="token" name="token" type="password" autocomplete="off" required placeholder="fmc1.…"><button type="submit">Sign in</button></form>${upstream}`,
    );
  }

  private async submitted(req: IncomingMessage, res: ServerResponse, pending: PendingAuthorization): Promise<void> {
    let form: URLSearchParams;
    try {
      form = new URLSearchParams((await readBody(req, { maxBytes: 16 * 1024, timeoutMs: this.options.bodyTimeoutMs })).toString('utf8'));
    } catch {
      return this.show(res, pending, 'The form could not be read; try again.', 400);
    }
    const step = form.get('step');
    const { server } = this.options;
    if (pending.prompt === 'consent' && (step === 'approve' || step === 'deny')) return redirect(res, await server.consented(pending.uid, step === 'approve'));
    if (pending.prompt !== 'login' || step !== 'token') return this.show(res, pending, 'That step does not belong to this page; try again.', 400);
    const token = (form.get('token') ?? '').trim();
    try {
      const identity = await verifyBearerToken(this.options.store, token);
      redirect(res, await server.signedIn(pending.uid, { kind: 'identity', identityId: identity.id, name: identity.name }));
    } catch (error) {
      if (!(error instanceof TokenRefused)) throw error;
      const tokenId = parseIdentityToken(token)?.id;
      await this.options.refusals.record({
        source: req.socket.remoteAddress ?? 'unknown',
        tool: '/oauth/sign-in',
        arguments: { client_id: pending.client.id, ...(tokenId ? { token_id: tokenId } : {}) },
        errorCode: 'forbidden',
        reason: `OAuth sign-in refused: ${error.message}`,
      });
      this.show(res, pending, `Sign-in refused: ${error.message}.`, 401);
    }
  }

  private async upstreamCallback(res: ServerResponse, url: URL, origin: string): Promise<void> {
    const { upstream, server } = this.options;
    if (!upstream) return page(res, 404, 'Not found', '<h1>Not found</h1>');
    try {
      const { uid, account } = await upstream.finish(url.searchParams, `${origin}${CALLBACK_PATH}`);
      redirect(res, await server.signedIn(uid, account));
    } catch (error) {
      page(
        res,
        400,
        'Sign-in failed',
        `<h1>Sign-in failed</h1><p class="error">${escapeHtml((error as Error).message)}</p><p>Start again from the client that sent you here.</p>`,
      );
    }
  }
}

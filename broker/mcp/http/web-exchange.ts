import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A Node request as a web-standard Request, over a body the caller has
 * already read (and bounded). The signal aborts when the client goes away,
 * which ends the SDK's SSE streams for that exchange.
 */
export function toWebRequest(req: IncomingMessage, body: Buffer | undefined, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  const init: RequestInit = { method: req.method ?? 'GET', headers, signal };
  if (body !== undefined && req.method !== 'GET' && req.method !== 'HEAD') init.body = new Uint8Array(body);
  return new Request(url, init);
}

/** Writes a web-standard Response to a Node response, streaming its body until it ends or the client leaves. */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else headers[name] = [...(Array.isArray(existing) ? existing : [existing]), value];
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  // SSE events must reach the client as they are written, not when a buffer fills.
  res.flushHeaders();
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => {});
  res.once('close', stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
      }
    }
  } catch {
    // The client left or the stream was torn down: nothing more to write.
  } finally {
    res.off('close', stop);
    res.end();
  }
}

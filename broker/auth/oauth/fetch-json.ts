/** How long one request to an issuer may take, and how much of an answer is read. */
const TIMEOUT_MS = 5000;
const MAX_BYTES = 256 * 1024;

/**
 * A JSON document from an issuer (discovery, keys, introspection), bounded in
 * time and size: an issuer that hangs or answers without end holds up no
 * request for long. Throws an Error saying what went wrong.
 */
export async function fetchJson(url: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const response = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_BYTES) throw new Error(`${url} answered more than ${MAX_BYTES} bytes`);
  const text = await response.text();
  if (text.length > MAX_BYTES) throw new Error(`${url} answered more than ${MAX_BYTES} bytes`);
  const body: unknown = JSON.parse(text);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Error(`${url} did not answer a JSON object`);
  return body as Record<string, unknown>;
}

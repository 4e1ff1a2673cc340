import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The `data` of the error a request gets when the stream that owed its answer ended without it. */
export const ANSWER_LOST = 'answer_lost';

/** JSON-RPC's "connection closed" server error, as the SDK client names it. */
const CONNECTION_CLOSED = -32000;

/** The ids of the requests a POST body carries (one message or a batch). */
function requestIds(body: unknown): (string | number)[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((message: { id?: unknown; method?: unknown }) =>
      typeof message?.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number') ? [message.id] : [],
    );
  } catch {
    return [];
  }
}

/** Strikes from `owed` every request an SSE text answers: the events' data lines joined, parsed as JSON-RPC. */
function strikeAnswered(events: string, owed: Set<string | number>): void {
  for (const event of events.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (data === '') continue;
    try {
      const message = JSON.parse(data) as { id?: string | number; result?: unknown; error?: unknown };
      if (message.id !== undefined && ('result' in message || 'error' in message)) owed.delete(message.id);
    } catch {
      // Not JSON-RPC: the SDK reports it itself.
    }
  }
}

/**
 * A fetch for the SDK's Streamable HTTP client transport that sees that every
 * request sent in a POST gets its answer. When the broker ends the SSE stream
 * of a POST (or the connection breaks) before that stream carried the answer
 * to each request it owes, the SDK 1.x transport neither fails the request
 * nor can resume the stream (the broker keeps no event store), so the request
 * would wait out its timeout: each such request is answered instead, through
 * `deliver` (the transport's onmessage), with a "connection closed" error
 * whose data is ANSWER_LOST, for the caller to judge (it may have run).
 */
export function owedAnswersFetch(deliver: (message: JSONRPCMessage) => void, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    const owed = new Set(init?.method === 'POST' ? requestIds(init.body) : []);
    const body = response.body;
    if (owed.size === 0 || body === null || !response.headers.get('content-type')?.includes('text/event-stream')) return response;
    const decoder = new TextDecoder();
    let pending = '';
    const settle = () => {
      // The transport closing aborts its streams: the SDK has failed their requests already.
      if (init?.signal?.aborted) return;
      strikeAnswered(`${pending}${decoder.decode()}\n\n`, owed);
      pending = '';
      for (const id of owed) {
        deliver({
          jsonrpc: '2.0',
          id,
          error: { code: CONNECTION_CLOSED, message: "the broker's stream ended before it answered", data: ANSWER_LOST },
        });
      }
      owed.clear();
    };
    const reader = body.getReader();
    const watched = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { value, done } = await reader.read();
          if (done) {
            controller.close();
            // After the SDK has read what came before: the answer, when it came, is dispatched first.
            setImmediate(settle);
            return;
          }
          pending += decoder.decode(value, { stream: true });
          const end = pending.lastIndexOf('\n\n');
          if (end >= 0) {
            strikeAnswered(pending.slice(0, end), owed);
            pending = pending.slice(end + 2);
          }
          controller.enqueue(value);
        } catch (error) {
          controller.error(error);
          setImmediate(settle);
        }
      },
      cancel(reason) {
        // The transport closing (the relay moving on): nobody waits for these answers any more.
        owed.clear();
        return reader.cancel(reason);
      },
    });
    return new Response(watched, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

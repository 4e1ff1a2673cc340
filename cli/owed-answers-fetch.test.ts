import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { ANSWER_LOST, owedAnswersFetch } from './owed-answers-fetch.ts';

const encoder = new TextEncoder();

/** A broker's SSE answer to a POST: these events, then the stream ends (or breaks, given `breakWith`). */
function sseAnswer(events: unknown[], breakWith?: Error): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const event of events) controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(event)}\n\n`));
      if (breakWith) controller.error(breakWith);
      else controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

function post(id: number, signal?: AbortSignal): RequestInit {
  return { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'agent_info' } }), ...(signal ? { signal } : {}) };
}

/** Reads a response's body to its end (or its break), as the SDK's transport does, then lets the check run. */
async function drain(response: Response): Promise<void> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  try {
    while (!(await reader.read()).done) {}
  } catch {
    // A broken stream: the SDK reports it and goes on.
  }
  await new Promise((resolve) => setImmediate(resolve));
}

describe('a fetch that sees every request of a POST answered', () => {
  it('passes an answered stream through untouched', async () => {
    const delivered: JSONRPCMessage[] = [];
    const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 0 } };
    const answer = { jsonrpc: '2.0', id: 7, result: { content: [] } };
    const response = await owedAnswersFetch(
      (message) => delivered.push(message),
      async () => sseAnswer([progress, answer]),
    )('http://b/mcp', post(7));
    const text = await response.text();
    await new Promise((resolve) => setImmediate(resolve));
    expect(text).toContain('"id":7');
    expect(delivered).toEqual([]);
  });

  it('answers a request whose stream ended without its answer, or broke, with an error saying the answer was lost', async () => {
    for (const breakWith of [undefined, new Error('other side closed')]) {
      const delivered: JSONRPCMessage[] = [];
      const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 0 } };
      const response = await owedAnswersFetch(
        (message) => delivered.push(message),
        async () => sseAnswer([progress], breakWith),
      )('http://b/mcp', post(8));
      await drain(response);
      expect(delivered).toEqual([{ jsonrpc: '2.0', id: 8, error: expect.objectContaining({ code: -32000, data: ANSWER_LOST }) }]);
    }
  });

  it('answers nothing for a transport that closed its streams itself, nor for a JSON answer or a notification', async () => {
    const delivered: JSONRPCMessage[] = [];
    const controller = new AbortController();
    controller.abort();
    await drain(
      await owedAnswersFetch(
        (message) => delivered.push(message),
        async () => sseAnswer([]),
      )('http://b/mcp', post(9, controller.signal)),
    );
    const json = new Response(JSON.stringify({ jsonrpc: '2.0', id: 10, result: {} }), { headers: { 'content-type': 'application/json' } });
    await (
      await owedAnswersFetch(
        (message) => delivered.push(message),
        async () => json,
      )('http://b/mcp', post(10))
    ).text();
    const notification = { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) };
    await drain(
      await owedAnswersFetch(
        (message) => delivered.push(message),
        async () => sseAnswer([]),
      )('http://b/mcp', notification),
    );
    expect(delivered).toEqual([]);
  });
});

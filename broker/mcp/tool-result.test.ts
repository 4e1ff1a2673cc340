import { describe, expect, it } from 'vitest';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { errorStructure, failedOutcome, toToolError, toToolResult } from './tool-result.ts';

const node = { host: 'web-1', availability: 'available', sampled_at_unix_ms: 1, failed_collectors: [], errors: [], name: 'web-1' };

describe('tool results', () => {
  it('give a call its structured result, its text in the broker format and its links, and no isError when it went well', () => {
    const link = { type: 'resource_link' as const, uri: 'fleet://hosts/web-1', name: 'web-1', mimeType: 'application/json' };
    const markdown = toToolResult({ action: agentInfo, structured: node, isError: false, shape: 'node' }, 'markdown', [link]);
    expect(markdown).not.toHaveProperty('isError');
    expect(markdown.structuredContent).toBe(node);
    expect(markdown.content).toEqual([{ type: 'text', text: expect.stringContaining('web-1') }, link]);
    const json = toToolResult({ action: agentInfo, structured: node, isError: false, shape: 'node' }, 'json');
    expect(JSON.parse((json.content[0] as { text: string }).text)).toEqual(node);
  });

  it('mark a run that failed on every host as an error, with its result whole', () => {
    const envelope = { schema_version: 1, targeted: 1, responded: 0, hosts: [], errors: [] };
    expect(toToolResult({ action: agentInfo, structured: envelope, isError: true, shape: 'envelope' }, 'markdown')).toMatchObject({
      isError: true,
      structuredContent: envelope,
    });
  });

  it("turn a refusal into an error result naming the next step, its details beside the code and confirm's targets apart", () => {
    const refusal = new FleetError('confirm_required', 'docker_stop stops 1 container', {
      details: { targets: [{ host: 'web-1', resource: 'web-1/nginx' }], grpcCode: 9, matched: 1 },
    });
    const result = toToolError(refusal, 'markdown');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      error: { code: 'confirm_required', message: 'docker_stop stops 1 container', hint: refusal.hint, matched: 1 },
      targets: [{ host: 'web-1', resource: 'web-1/nginx' }],
    });
    expect((result.content[0] as { text: string }).text).toMatch(/Error: confirm_required[\s\S]*Would act on:[\s\S]*web-1\/nginx[\s\S]*Next: /);
  });

  it('answer anything else thrown as internal, and an abort as cancelled', () => {
    expect(failedOutcome(new Error('boom')).structured).toMatchObject({ error: { code: 'internal', message: 'boom' } });
    expect(failedOutcome(new DOMException('stop', 'AbortError')).structured).toMatchObject({ error: { code: 'cancelled' } });
    expect(errorStructure(new FleetError('not_found', 'no agent is called "x"'))).toEqual({
      error: { code: 'not_found', message: 'no agent is called "x"', hint: expect.any(String) },
    });
  });

  it('keep the Markdown an outcome brings, and give JSON when the broker is asked for JSON', () => {
    const outcome = { ...failedOutcome(new FleetError('unavailable', 'the broker stopped')), markdown: 'The task failed.' };
    expect(toToolResult(outcome, 'markdown').content[0]).toEqual({ type: 'text', text: 'The task failed.' });
    expect(JSON.parse((toToolResult(outcome, 'json').content[0] as { text: string }).text)).toEqual(outcome.structured);
  });
});

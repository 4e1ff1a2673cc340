import { describe, expect, it } from 'vitest';
import { dockerInspect, dockerLogs } from '../../../shared/domains/docker/docker-actions.ts';
import { renderMarkdown } from './markdown.ts';

function node(host: string, fields: Record<string, unknown>, errors: { code: string; message: string }[] = []) {
  return { host, availability: errors.length ? 'unavailable' : 'available', sampled_at_unix_ms: 0, failed_collectors: [], errors, ...fields };
}

function logLines(count: number) {
  return Array.from({ length: count }, (_, i) => ({ stream: 'stdout', text: `line ${i}` }));
}

describe('renderMarkdown', () => {
  it("shows a log's newest lines and says how many older ones it left out and how to read them", () => {
    const text = renderMarkdown(dockerLogs, 'node', node('web-1', { container: 'app', lines: logLines(348), count: 348, truncated: false }));
    expect(text).toContain('`line 347`');
    expect(text).toContain('`line 298`');
    expect(text).not.toContain('`line 297`');
    expect(text).toMatch(/298 older rows not shown, the newest 50 are; .*until/);
  });

  it('keeps the newest lines of every host in a fleet-wide log', () => {
    const envelope = {
      targeted: 2,
      responded: 2,
      hosts: [node('a', { lines: logLines(100) }), node('b', { lines: logLines(100) })],
      errors: [],
    };
    const text = renderMarkdown(dockerLogs, 'envelope', envelope);
    expect(text).toContain('| `a` | `stdout` | `line 99` |');
    expect(text).toContain('| `b` | `stdout` | `line 99` |');
    expect(text).toMatch(/150 older rows not shown/);
  });

  it('tells hosts that answered with an error from hosts that did not answer', () => {
    const missing = node('web-1', {}, [{ code: 'not_found', message: 'no container "x" on this host' }]);
    const silent = node('web-2', {}, [{ code: 'deadline_exceeded', message: 'the agent did not answer' }]);
    const text = renderMarkdown(dockerLogs, 'envelope', { targeted: 2, responded: 0, hosts: [missing, silent], errors: [] });
    expect(text).toContain('0 of 2 hosts answered with a result; 1 answered with an error; 1 did not answer.');
  });

  it("gives a fleet-wide inspect the container's state, not only the host's availability", () => {
    const inspected = node('web-1', { name: 'nginx', image: 'nginx:1', state: { status: 'running', exit_code: 0, restart_count: 2 }, health: null });
    const text = renderMarkdown(dockerInspect, 'envelope', { targeted: 1, responded: 1, hosts: [inspected], errors: [] });
    expect(text).toContain('| host | availability | name | image | state.status | state.exit_code | state.restart_count |');
    expect(text).toContain('| `web-1` | `available` | `nginx` | `nginx:1` | `running` | 0 | 2 |');
  });
});

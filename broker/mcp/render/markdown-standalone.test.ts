import { describe, expect, it } from 'vitest';
import { doctor } from '../../../shared/domains/checkup/doctor-action.ts';
import { report } from '../../../shared/domains/checkup/report-action.ts';
import { dockerList } from '../../../shared/domains/docker/docker-actions.ts';
import { getMetrics } from '../../../shared/domains/fleet/index-actions.ts';
import { alerts, processes } from '../../../shared/domains/system/system-actions.ts';
import { renderMarkdown } from './markdown.ts';

function node(host: string, fields: Record<string, unknown>) {
  return { host, availability: 'available', sampled_at_unix_ms: 1_700_000_000_000, failed_collectors: [], errors: [], ...fields };
}

function envelope(...hosts: Record<string, unknown>[]) {
  return { schema_version: 1, targeted: hosts.length, responded: hosts.length, hosts, errors: [] };
}

/** Text a model acts on without structuredContent: subjects, messages, units, and the exact calls to make. */
describe('answer text that stands alone', () => {
  it('flags the alerts over their own threshold, never a row for the threshold it is weighed against', () => {
    const text = renderMarkdown(
      alerts,
      'envelope',
      envelope(
        node('vm', {
          alerts: [
            { metric: 'cpu', state: 'ok', value_percent: 43.1, threshold_percent: 90 },
            { metric: 'memory', state: 'critical', value_percent: 91, threshold_percent: 85 },
            { metric: 'disk', mount: '/', state: 'ok', value_percent: 24.4, threshold_percent: 90 },
          ],
          worst: 'critical',
        }),
      ),
    );
    expect(text).toContain('1 of 3 rows need attention');
    expect(text).not.toContain('threshold_percent 90');
    expect(text).toMatch(/\| `vm` \| `memory` \| - \| `critical` \| 91 % \| 85 % \|/);
  });

  it("spells out each host's report: what needs attention, what changed and the exact call to make next", () => {
    const text = renderMarkdown(
      report,
      'envelope',
      envelope(
        node('vm', {
          schema_version: 1,
          status: 'warning',
          changed: true,
          needs_attention: [{ kind: 'container_down', subject: 'crashy', severity: 'warning', value: null }],
          notable_changes: [{ kind: 'state_changed', subject: 'crashy', before: 'running', after: 'exited' }],
          suggested_actions: [{ tool: 'docker_logs', arguments: { host: 'vm', name: 'crashy' }, reason: 'read why container crashy is down' }],
          containers_running: 1,
          containers_total: 2,
          previous_at_unix_ms: 1_700_000_000_000,
          saved: true,
          snapshots_kept: 2,
        }),
      ),
    );
    expect(text).toMatch(/\| `vm` \| `container_down` \| `crashy` \| `warning` \|/);
    expect(text).toMatch(/\| `vm` \| `state_changed` \| `crashy` \| `running` \| `exited` \|/);
    expect(text).toContain('- `vm`: `docker_logs {"host":"vm","name":"crashy"}`: `read why container crashy is down`');
    const one = renderMarkdown(
      report,
      'node',
      node('vm', {
        needs_attention: [],
        suggested_actions: [{ tool: 'processes', arguments: { host: 'vm', sort_by: 'cpu' }, reason: 'find what uses the CPU' }],
      }),
    );
    expect(one).toContain('`processes {"host":"vm","sort_by":"cpu"}`');
  });

  it("gives each doctor finding's subject, message and action", () => {
    const finding = {
      check: 'public_port',
      severity: 'warning',
      category: 'exposure',
      subject: 'web',
      message: 'container web publishes port 8080 on every address of the host, reachable from any network it is on',
      action: 'Publish it on 127.0.0.1 or a private address; docker_inspect host=vm name=web shows its ports.',
    };
    const text = renderMarkdown(
      doctor,
      'envelope',
      envelope(node('vm', { schema_version: 1, status: 'warn', critical_count: 0, warning_count: 1, findings: [finding], checks: [] })),
    );
    expect(text).toContain(finding.message);
    expect(text).toContain(finding.action);
    expect(text).toMatch(/\| `vm` \| `public_port` \| `warning` \| `exposure` \| `web` \|/);
  });

  it('gives every series of get_metrics its latest, min, average, max and trend, with the unit', () => {
    const answer = {
      target: 'host',
      id: 'vm',
      metric: 'cpu',
      range: '1h',
      unit: 'percent',
      percent_of: 'machine',
      step_s: 60,
      series: [{ name: 'vm', latest: 72.4, min: 3.1, average: 40.25, max: 97, trend: 'rising', points: [] }],
    };
    const text = renderMarkdown(getMetrics, 'broker', answer);
    expect(text).toContain('| `vm` | 72.4 % | 3.1 % | 40.3 % | 97 % | `rising` |');
    expect(text).toContain('- **percent_of**: `machine`');
    const memory = renderMarkdown(getMetrics, 'broker', {
      ...answer,
      metric: 'memory',
      unit: 'bytes',
      series: [{ ...answer.series[0], latest: 3 * 1024 ** 3 }],
    });
    expect(memory).toContain('| `vm` | 3.0 GiB |');
  });

  it('keeps the unix ms a time field names, with the date beside it', () => {
    const text = renderMarkdown(
      dockerList,
      'node',
      node('vm', {
        containers: [
          {
            name: 'crashy',
            state: 'restarting',
            status: 'Restarting (3) 2 seconds ago',
            started_at_unix_ms: 1_700_000_000_000,
            restart_count: 3,
            exit_code: 3,
            labels: { team: 'a' },
          },
        ],
        count: 1,
      }),
    );
    expect(text).toContain('1700000000000 (2023-11-14T22:13:20Z)');
  });

  it("leaves no field out of one host's table, and says how to read the fields a fleet table leaves out", () => {
    const row = { pid: 7, name: 'yes', container: 'hog', user: 'root', state: 'running', cpu_percent: 99.5, mem_percent: 0.1, rss_bytes: 4096 };
    const one = renderMarkdown(processes, 'node', node('vm', { processes: [row], zombies: [], total: 1, cpu_window_ms: 1000, cpu_cores: 2 }));
    expect(one).toContain('| pid | name | container | user | cpu_percent | mem_percent | rss_bytes | state |');
    expect(one).not.toContain('Fields not in the table');
    expect(one).toMatch(/100 % = one whole core/);
    const fleet = renderMarkdown(processes, 'envelope', envelope(node('vm', { processes: [row], zombies: [], total: 1 })));
    expect(fleet).toContain("Fields not in the table: state. Call again with host=NAME for every field of that host's answer.");
  });
});

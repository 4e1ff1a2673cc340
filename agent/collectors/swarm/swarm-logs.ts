import type { Readable } from 'node:stream';
import type { ServiceRecord, SwarmSnapshot, TaskRecord } from '../../../shared/engine/records.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { toUnixSeconds } from '../../engine/engine-time.ts';
import { LogDemultiplexer, MAX_LINE_CHARS, splitTimestamp } from '../../engine/log-demultiplexer.ts';
import type { SwarmEngine } from './swarm-engine.ts';

const LEVELS = ['debug', 'info', 'warn', 'error', 'fatal'] as const;
type Level = (typeof LEVELS)[number];
const MAX_SERVICES = 25;
const MAX_LINES = 5000;

/** The level a log line states, when it states one (level=warn, [ERROR], "level":"info", WARN:…). */
function lineLevel(text: string): Level | undefined {
  const match = /(?:level"?\s*[=:]\s*"?|\[|^|\s)(debug|info|warn(?:ing)?|error|err|fatal|panic|crit(?:ical)?)(?:"|\]|:|\s|$)/i.exec(text) ?? undefined;
  if (!match) return undefined;
  const word = (match[1] ?? '').toLowerCase();
  if (word.startsWith('warn')) return 'warn';
  if (word === 'err' || word === 'error') return 'error';
  if (word === 'panic' || word.startsWith('crit') || word === 'fatal') return 'fatal';
  return word as Level;
}

interface SwarmLogRequest {
  service?: string;
  task?: string;
  stack?: string;
  cluster?: string;
  contains?: string;
  tail?: number;
  since?: string | number;
  level?: Level;
}

interface Line {
  service: string;
  task: string;
  node: string;
  timestamp: string;
  stream: 'stdout' | 'stderr';
  level?: string;
  text: string;
}

function resolveService(snapshot: SwarmSnapshot, wanted: string): ServiceRecord {
  const found = snapshot.services.find((s) => s.id === wanted || s.name === wanted || (wanted.length >= 6 && s.id.startsWith(wanted)));
  if (!found) throw new FleetError('not_found', `no service "${wanted}" in this swarm`, { hint: 'find with type service lists them.' });
  return found;
}

function resolveTask(snapshot: SwarmSnapshot, wanted: string): TaskRecord {
  const byId = snapshot.tasks.find((t) => t.id === wanted || (wanted.length >= 6 && t.id.startsWith(wanted)));
  if (byId) return byId;
  const byName = snapshot.tasks.filter((t) => t.name === wanted).sort((a, b) => b.created_unix_ms - a.created_unix_ms);
  if (byName[0]) return byName[0];
  throw new FleetError('not_found', `no task "${wanted}" in this swarm`, {
    hint: 'Name a task by id or as service.slot; describe on the service lists its tasks.',
  });
}

/**
 * get_logs: one scope's recent lines, merged on the manager. Lines carry their
 * service, task and node (from the engine's log details) so a wide read stays
 * attributable; a wide read covers at most 25 services and lists the rest.
 */
export async function readSwarmLogs(engine: SwarmEngine, snapshot: SwarmSnapshot, request: SwarmLogRequest, signal: AbortSignal) {
  const scopes = [request.service, request.task, request.stack, request.cluster].filter((s) => s !== undefined);
  if (scopes.length !== 1) {
    throw new FleetError('invalid_argument', 'give exactly one of service, task, stack and cluster', {
      hint: 'Such as {"service": "web"} or {"stack": "monitoring"}.',
    });
  }
  const tail = request.tail ?? 100;
  const since = request.since === undefined ? undefined : Math.floor(toUnixSeconds(request.since, 'since'));
  const nodeName = (id: string) => snapshot.nodes.find((n) => n.id === id)?.hostname ?? id;
  const taskName = new Map(snapshot.tasks.map((t) => [t.id, t.name]));
  let targets: { path: string; service: string }[];
  let scope: string;
  const errors: { service: string; message: string }[] = [];
  if (request.task !== undefined) {
    const task = resolveTask(snapshot, request.task);
    targets = [{ path: `/tasks/${task.id}/logs`, service: task.service_name }];
    scope = `task ${task.name}`;
  } else if (request.service !== undefined) {
    const service = resolveService(snapshot, request.service);
    targets = [{ path: `/services/${service.id}/logs`, service: service.name }];
    scope = `service ${service.name}`;
  } else {
    const members = request.stack !== undefined ? snapshot.services.filter((s) => s.stack === request.stack) : snapshot.services;
    if (request.stack !== undefined && members.length === 0) {
      throw new FleetError('not_found', `no stack "${request.stack}" in this swarm`, { hint: 'find with type stack lists them.' });
    }
    const sorted = [...members].sort((a, b) => a.name.localeCompare(b.name));
    targets = sorted.slice(0, MAX_SERVICES).map((s) => ({ path: `/services/${s.id}/logs`, service: s.name }));
    for (const skipped of sorted.slice(MAX_SERVICES))
      errors.push({ service: skipped.name, message: `not read: a wide read covers at most ${MAX_SERVICES} services; ask for this one by name` });
    scope = request.stack !== undefined ? `stack ${request.stack}` : 'cluster';
  }
  const minimum = request.level ? LEVELS.indexOf(request.level) : 0;
  const needle = request.contains?.toLowerCase();
  const lines: Line[] = [];
  await Promise.all(
    targets.map(async (target) => {
      try {
        const stream = (await engine.stream(target.path, {
          stdout: 1,
          stderr: 1,
          timestamps: 1,
          details: 1,
          tail,
          ...(since !== undefined ? { since } : {}),
        })) as Readable;
        const demux = new LogDemultiplexer(true);
        await new Promise<void>((resolve) => {
          const onAbort = () => stream.destroy();
          signal.addEventListener('abort', onAbort, { once: true });
          const take = (raw: { stream: 'stdout' | 'stderr'; raw: string }) => {
            // With details=1 a line reads "timestamp labels text"; the labels name the task and node.
            const stamped = splitTimestamp(raw.raw);
            const timestamp = stamped.timestamp;
            let text = stamped.text;
            let taskId = '';
            let nodeId = '';
            const space = text.indexOf(' ');
            const head = space > 0 ? text.slice(0, space) : text;
            if (head.startsWith('com.docker.swarm.')) {
              for (const pair of head.split(',')) {
                const [key, value = ''] = pair.split('=');
                if (key === 'com.docker.swarm.task.id') taskId = value;
                if (key === 'com.docker.swarm.node.id') nodeId = value;
              }
              text = space > 0 ? text.slice(space + 1) : '';
            }
            const level = lineLevel(text);
            if (minimum > 0 && (level === undefined || LEVELS.indexOf(level) < minimum)) return;
            if (needle && !text.toLowerCase().includes(needle)) return;
            lines.push({
              service: target.service,
              task: taskName.get(taskId) ?? taskId,
              node: nodeName(nodeId),
              timestamp: timestamp ?? '',
              stream: raw.stream,
              ...(level ? { level } : {}),
              text: text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text,
            });
          };
          stream.on('data', (chunk: Buffer) => {
            for (const line of demux.push(chunk)) take(line);
          });
          const done = () => {
            for (const line of demux.flush()) take(line);
            signal.removeEventListener('abort', onAbort);
            resolve();
          };
          stream.on('end', done);
          stream.on('error', done);
          stream.on('close', done);
        });
      } catch (error) {
        errors.push({ service: target.service, message: (error as Error).message });
      }
    }),
  );
  lines.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  const truncated = lines.length > MAX_LINES;
  const kept = truncated ? lines.slice(-MAX_LINES) : lines;
  return { scope, lines: kept, count: kept.length, services: [...new Set(targets.map((t) => t.service))], truncated, errors };
}

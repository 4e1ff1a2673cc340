import type { ActionOutput } from '../../../shared/catalog/action.ts';
import type { serviceList, serviceRestart, serviceStart, serviceStatus, serviceStop } from '../../../shared/domains/systemd/service-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { type JournalLine, journalLine } from './journal-entry.ts';
import type { JournalReader } from './journal-reader.ts';
import { counter, type ServiceManager, timestampMs, type UnitVerb, unitName } from './service-manager.ts';

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const nullableText = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** A unit's newest journal lines; a journal that cannot be read leaves them out and says why. */
async function lastLines(journal: JournalReader, unit: string, count: number, signal: AbortSignal): Promise<{ lines: JournalLine[]; error?: FleetError }> {
  if (count === 0) return { lines: [] };
  const lines: JournalLine[] = [];
  try {
    await journal.read({ unit }, count, signal, (entry) => {
      lines.push(journalLine(entry).line);
      return lines.length < count;
    });
    return { lines };
  } catch (error) {
    if (signal.aborted) throw error;
    return { lines, error: error instanceof FleetError ? error : new FleetError('collector_failed', (error as Error).message, { collector: 'systemd' }) };
  }
}

/** service_list, service_status, and the changes: systemd's units through its bus API. */
export function registerServiceActions(
  dispatcher: Dispatcher,
  manager: ServiceManager,
  journal: JournalReader,
  deadlineWaitMs: (deadline: number) => number,
): void {
  dispatcher.register<typeof serviceList>('systemd.service_list', async (params) => {
    const units = (await manager.list(['*.service']))
      .filter((unit) => params.state === undefined || unit.active_state === params.state || unit.sub_state === params.state)
      .filter((unit) => params.name === undefined || unit.name.toLowerCase().includes(params.name.toLowerCase()))
      .sort((a, b) => a.name.localeCompare(b.name));
    return { payload: { units, count: units.length } };
  });

  dispatcher.register<typeof serviceStatus>('systemd.service_status', async (params, context) => {
    const name = unitName(params.name);
    const { unit, service } = await manager.read(name);
    const journalLines = await lastLines(journal, name, params.lines ?? 10, context.signal);
    const cpuNs = counter(service.CPUUsageNSec);
    const payload: ActionOutput<typeof serviceStatus> = {
      name,
      description: text(unit.Description),
      load_state: text(unit.LoadState),
      active_state: text(unit.ActiveState),
      sub_state: text(unit.SubState),
      unit_file_state: nullableText(unit.UnitFileState),
      since_unix_ms: timestampMs(unit.StateChangeTimestamp),
      main_pid: counter(service.MainPID) || null,
      memory_bytes: counter(service.MemoryCurrent),
      cpu_s: cpuNs === null ? null : Math.round(cpuNs / 1e6) / 1000,
      tasks: counter(service.TasksCurrent),
      restarts: counter(service.NRestarts),
      result: nullableText(service.Result),
      journal: journalLines.lines,
    };
    return { payload, errors: journalLines.error ? [journalLines.error.toInfo()] : [] };
  });

  const change = (verb: UnitVerb) => async (params: { name: string }, context: { deadlineUnixMs: number }) => {
    const name = unitName(params.name);
    const jobResult = await manager.change(verb, name, deadlineWaitMs(context.deadlineUnixMs));
    const { unit, service } = await manager.read(name);
    const payload = {
      name,
      job_result: jobResult,
      active_state: text(unit.ActiveState),
      sub_state: text(unit.SubState),
      main_pid: counter(service.MainPID) || null,
    };
    if (jobResult === 'done' || jobResult === 'running') return { payload };
    // The change was made and did not take: the unit's state says where it is, and its journal why.
    return {
      payload,
      errors: [
        new FleetError(
          'collector_failed',
          `systemd's job to ${verb.replace('Unit', '').toLowerCase()} ${name} ended "${jobResult}": ${name} is ${payload.active_state} (${payload.sub_state})`,
          {
            collector: 'systemd',
            hint: `service_status with name ${name} shows its last journal lines.`,
          },
        ).toInfo(),
      ],
    };
  };
  dispatcher.register<typeof serviceStart>('systemd.service_start', change('StartUnit'));
  dispatcher.register<typeof serviceRestart>('systemd.service_restart', change('RestartUnit'));
  dispatcher.register<typeof serviceStop>('systemd.service_stop', change('StopUnit'));
}

import { randomInt } from 'node:crypto';

/** A refusal as Proxmox VE sends it: the status code and the message in the status line. */
export class PveRefusal extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

export type GuestType = 'qemu' | 'lxc';
export type PowerAction = 'start' | 'reboot' | 'shutdown';

export interface SimGuest {
  vmid: number;
  name: string;
  node: string;
  type: GuestType;
  status: 'running' | 'stopped';
  template: boolean;
  tags: string;
  maxcpu: number;
  maxmem: number;
  maxdisk: number;
  /** Unix ms of the last start, while running. */
  startedAt: number | null;
}

export interface SimTask {
  upid: string;
  node: string;
  pid: number;
  pstart: number;
  /** Unix seconds, as the API gives them. */
  starttime: number;
  endtime: number | undefined;
  type: string;
  id: string;
  user: string;
  exitstatus: string | undefined;
  log: string[];
}

interface SimNode {
  name: string;
  nodeid: number;
  ip: string;
  bootedAt: number;
}

const hex8 = (value: number) => value.toString(16).toUpperCase().padStart(8, '0');
const seconds = (ms: number) => Math.floor(ms / 1000);
const GIB = 1024 ** 3;

/** A UPID in Proxmox VE's format, built independently of the collector's parser. */
export function formatUpid(task: Pick<SimTask, 'node' | 'pid' | 'pstart' | 'starttime' | 'type' | 'id' | 'user'>): string {
  return `UPID:${task.node}:${hex8(task.pid)}:${hex8(task.pstart)}:${hex8(task.starttime)}:${task.type}:${task.id}:${task.user}:`;
}

const TASK_TYPES: Record<GuestType, Record<PowerAction, string>> = {
  qemu: { start: 'qmstart', reboot: 'qmreboot', shutdown: 'qmshutdown' },
  lxc: { start: 'vzstart', reboot: 'vzreboot', shutdown: 'vzshutdown' },
};

/**
 * The state behind the simulator: a cluster of nodes with VMs and containers
 * that start, reboot and shut down through tasks, which run for
 * `taskDurationMs` and then finish with a log, as Proxmox VE's workers do.
 * Answers are plain data shaped like the API's; the simulator checks them.
 */
export class PveCluster {
  readonly nodes: SimNode[];
  readonly guests = new Map<number, SimGuest>();
  readonly tasks: SimTask[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly name: string,
    nodeNames: string[],
    private readonly taskDurationMs: number,
  ) {
    const now = Date.now();
    this.nodes = nodeNames.map((node, index) => ({ name: node, nodeid: index + 1, ip: `10.20.0.${11 + index}`, bootedAt: now - (9 + index) * 86_400_000 }));
    const first = nodeNames[0] ?? 'pve1';
    const second = nodeNames[1] ?? first;
    const guest = (vmid: number, name: string, node: string, type: GuestType, running: boolean, extra: Partial<SimGuest> = {}) =>
      this.guests.set(vmid, {
        vmid,
        name,
        node,
        type,
        status: running ? 'running' : 'stopped',
        template: false,
        tags: '',
        maxcpu: type === 'qemu' ? 2 : 1,
        maxmem: (type === 'qemu' ? 4 : 1) * GIB,
        maxdisk: (type === 'qemu' ? 32 : 8) * GIB,
        startedAt: running ? now - vmid * 60_000 : null,
        ...extra,
      });
    guest(101, 'web', first, 'qemu', true, { tags: 'prod;web' });
    guest(102, 'db', first, 'qemu', true, { tags: 'prod', maxmem: 8 * GIB });
    guest(103, 'win-test', second, 'qemu', false, { tags: 'lab' });
    guest(201, 'dns', first, 'lxc', true, { tags: 'infra' });
    guest(202, 'backup-proxy', second, 'lxc', false);
    guest(9000, 'debian-12-template', second, 'qemu', false, { template: true });
    this.seedHistory(first, second, now);
  }

  /** Finished tasks from before the simulator started, so lists and filters have something to show. */
  private seedHistory(first: string, second: string, now: number): void {
    const finished = (node: string, startedAgoMs: number, type: string, id: string, exitstatus: string, log: string[]) => {
      const starttime = seconds(now - startedAgoMs);
      const task = { node, pid: randomInt(1000, 400_000), pstart: randomInt(1_000_000, 9_000_000), starttime, type, id, user: 'root@pam' };
      this.tasks.push({ ...task, upid: formatUpid(task), endtime: starttime + 42, exitstatus, log });
    };
    const backupLog = Array.from({ length: 120 }, (_, i) => `INFO: ${i * 5}% (${(i * 0.3).toFixed(1)} GiB of 32.0 GiB) in ${i * 2}s`);
    finished(first, 3 * 3_600_000, 'vzdump', '101', 'OK', [
      'INFO: starting new backup job: vzdump 101 --storage local --mode snapshot',
      ...backupLog,
      'INFO: Finished Backup of VM 101',
      'TASK OK',
    ]);
    finished(first, 2 * 3_600_000, 'vzdump', '102', 'job errors', [
      'INFO: starting new backup job: vzdump 102',
      'ERROR: Backup of VM 102 failed - storage full',
      'TASK ERROR: job errors',
    ]);
    finished(second, 26 * 3_600_000, 'aptupdate', '', 'OK', ['update package lists', 'TASK OK']);
    finished(second, 25 * 3_600_000, 'qmstart', '103', 'OK', ['TASK OK']);
  }

  node(name: string): SimNode {
    const node = this.nodes.find((candidate) => candidate.name === name);
    if (!node) throw new PveRefusal(500, `hostname lookup '${name}' failed - failed to get address info for: ${name}: Name or service not known`);
    return node;
  }

  /** GET /cluster/status, as the node `local` answers it. */
  clusterStatus(local: string): Record<string, unknown>[] {
    return [
      { type: 'cluster', id: 'cluster', name: this.name, nodes: this.nodes.length, quorate: 1, version: 7 },
      ...this.nodes.map((node) => ({
        type: 'node',
        id: `node/${node.name}`,
        name: node.name,
        nodeid: node.nodeid,
        ip: node.ip,
        online: 1,
        local: node.name === local ? 1 : 0,
        level: '',
      })),
    ];
  }

  /** GET /cluster/resources, of the kinds the caller may see. */
  resources(type: string | undefined, visible: { nodes: boolean; guests: boolean }): Record<string, unknown>[] {
    const now = Date.now();
    const rows: Record<string, unknown>[] = [];
    if (visible.nodes && (type === undefined || type === 'node')) {
      for (const node of this.nodes) {
        rows.push({
          id: `node/${node.name}`,
          type: 'node',
          node: node.name,
          status: 'online',
          cpu: 0.0731,
          maxcpu: 16,
          mem: 21 * GIB,
          maxmem: 64 * GIB,
          disk: 12 * GIB,
          maxdisk: 94 * GIB,
          uptime: seconds(now - node.bootedAt),
          level: '',
          'cgroup-mode': 2,
        });
      }
    }
    if (visible.nodes && (type === undefined || type === 'storage')) {
      for (const node of this.nodes) {
        rows.push({
          id: `storage/${node.name}/local`,
          type: 'storage',
          node: node.name,
          storage: 'local',
          status: 'available',
          plugintype: 'dir',
          content: 'iso,vztmpl,backup',
          shared: 0,
          disk: 12 * GIB,
          maxdisk: 94 * GIB,
        });
      }
    }
    if (visible.guests && (type === undefined || type === 'vm')) {
      for (const guest of [...this.guests.values()].sort((a, b) => a.vmid - b.vmid)) {
        const running = guest.status === 'running';
        rows.push({
          id: `${guest.type}/${guest.vmid}`,
          type: guest.type,
          vmid: guest.vmid,
          name: guest.name,
          node: guest.node,
          status: guest.status,
          template: guest.template ? 1 : 0,
          cpu: running ? 0.0125 * (guest.vmid % 7) : 0,
          maxcpu: guest.maxcpu,
          mem: running ? Math.round(guest.maxmem * 0.42) : 0,
          maxmem: guest.maxmem,
          disk: 0,
          maxdisk: guest.maxdisk,
          uptime: running && guest.startedAt ? seconds(now - guest.startedAt) : 0,
          netin: running ? 123_456 : 0,
          netout: running ? 65_432 : 0,
          diskread: 0,
          diskwrite: 0,
          ...(guest.tags ? { tags: guest.tags } : {}),
        });
      }
    }
    return rows;
  }

  /** GET /nodes/{node}/status; uptime, swap and kversion are not in the schema, which allows more, and every release sends them. */
  nodeStatus(name: string): Record<string, unknown> {
    const node = this.node(name);
    return {
      cpu: 0.0731,
      cpuinfo: { cores: 8, cpus: 16, sockets: 1, model: 'AMD Ryzen 7 5700G with Radeon Graphics' },
      loadavg: ['0.42', '0.38', '0.35'],
      memory: { total: 64 * GIB, used: 21 * GIB, free: 43 * GIB, available: 41 * GIB },
      rootfs: { total: 94 * GIB, used: 12 * GIB, free: 82 * GIB, avail: 77 * GIB },
      pveversion: 'pve-manager/8.3.2/3e76eec21c4a14a7',
      'current-kernel': { sysname: 'Linux', release: '6.8.12-5-pve', version: '#1 SMP PREEMPT_DYNAMIC PMX 6.8.12-5 (2024-12-03T10:26Z)', machine: 'x86_64' },
      'boot-info': { mode: 'efi', secureboot: 0 },
      kversion: 'Linux 6.8.12-5-pve #1 SMP PREEMPT_DYNAMIC PMX 6.8.12-5 (2024-12-03T10:26Z)',
      uptime: seconds(Date.now() - node.bootedAt),
      swap: { total: 8 * GIB, used: 0, free: 8 * GIB },
    };
  }

  task(node: string, upid: string): SimTask {
    const task = this.tasks.find((candidate) => candidate.upid === upid && candidate.node === node);
    if (!task) throw new PveRefusal(500, `no such task`);
    return task;
  }

  /** GET /nodes/{node}/tasks, newest first, for a caller who may see `mayRead` tasks. */
  listTasks(
    node: string,
    filters: { limit: number; start: number; errors: boolean; source: string; vmid?: number; typefilter?: string; since?: number },
    mayRead: (task: SimTask) => boolean,
  ): Record<string, unknown>[] {
    this.node(node);
    // Newest first; the reversal keeps tasks started in the same second newest first too (the sort is stable).
    return [...this.tasks]
      .reverse()
      .filter((task) => task.node === node && mayRead(task))
      .filter((task) => (filters.source === 'active' ? task.endtime === undefined : filters.source === 'archive' ? task.endtime !== undefined : true))
      .filter((task) => !filters.errors || (task.exitstatus !== undefined && task.exitstatus !== 'OK'))
      .filter((task) => filters.vmid === undefined || task.id === String(filters.vmid))
      .filter((task) => filters.typefilter === undefined || task.type === filters.typefilter)
      .filter((task) => filters.since === undefined || task.starttime >= filters.since)
      .sort((a, b) => b.starttime - a.starttime)
      .slice(filters.start, filters.start + filters.limit)
      .map((task) => ({
        upid: task.upid,
        node: task.node,
        pid: task.pid,
        pstart: task.pstart,
        starttime: task.starttime,
        type: task.type,
        id: task.id,
        user: task.user,
        ...(task.endtime !== undefined ? { endtime: task.endtime, status: task.exitstatus } : {}),
      }));
  }

  taskStatus(task: SimTask): Record<string, unknown> {
    return {
      upid: task.upid,
      node: task.node,
      pid: task.pid,
      pstart: task.pstart,
      starttime: task.starttime,
      type: task.type,
      id: task.id,
      user: task.user,
      status: task.endtime === undefined ? 'running' : 'stopped',
      ...(task.exitstatus !== undefined ? { exitstatus: task.exitstatus } : {}),
    };
  }

  /** Lines numbered from 1, `start` lines skipped; the whole count goes in the envelope's `total`. */
  taskLog(task: SimTask, start: number, limit: number): { lines: { n: number; t: string }[]; total: number } {
    const lines = task.log.slice(start, start + limit).map((t, i) => ({ n: start + i + 1, t }));
    return { lines, total: task.log.length };
  }

  /** POST /nodes/{node}/{type}/{vmid}/status/{action}: checks what Proxmox VE checks before it forks the worker, then runs the task. */
  power(nodeName: string, type: GuestType, vmid: number, action: PowerAction, user: string): string {
    this.node(nodeName);
    const guest = this.guests.get(vmid);
    const label = type === 'qemu' ? 'VM' : 'CT';
    if (!guest || guest.type !== type || guest.node !== nodeName) {
      throw new PveRefusal(500, `Configuration file 'nodes/${nodeName}/${type === 'qemu' ? 'qemu-server' : 'lxc'}/${vmid}.conf' does not exist`);
    }
    if (guest.template && action === 'start') throw new PveRefusal(500, `${label} ${vmid} is a template and cannot be started`);
    if (action === 'start' && guest.status === 'running') throw new PveRefusal(500, `${label} ${vmid} already running`);
    if (action !== 'start' && guest.status !== 'running') throw new PveRefusal(500, `${label} ${vmid} not running`);
    const fields = {
      node: nodeName,
      pid: randomInt(1000, 400_000),
      pstart: randomInt(1_000_000, 9_000_000),
      starttime: seconds(Date.now()),
      type: TASK_TYPES[type][action],
      id: String(vmid),
      user,
    };
    const task: SimTask = { ...fields, upid: formatUpid(fields), endtime: undefined, exitstatus: undefined, log: [] };
    if (action !== 'start') task.log.push(`requesting shutdown of ${label} ${vmid}`);
    this.tasks.push(task);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (action === 'shutdown') {
        guest.status = 'stopped';
        guest.startedAt = null;
        task.log.push(`${label} ${vmid} stopped`);
      } else {
        guest.status = 'running';
        guest.startedAt = Date.now();
        task.log.push(`${label} ${vmid} started`);
      }
      task.log.push('TASK OK');
      task.exitstatus = 'OK';
      task.endtime = Math.max(task.starttime, seconds(Date.now()));
    }, this.taskDurationMs);
    this.timers.add(timer);
    return task.upid;
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}

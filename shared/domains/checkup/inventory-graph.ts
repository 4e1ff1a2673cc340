/**
 * One Mermaid flowchart of every host answered: hosts, their containers and
 * published ports, swarm membership, Proxmox VE clusters and guests. Node ids
 * are made here (h0, h0c1…), never taken from the fleet; every label is fleet
 * text, quoted with every character outside a small safe set written as a
 * Mermaid entity (`#35;`), so no name, image or tag can end a label, start a
 * directive, add a click handler or close the Markdown fence around the graph.
 */

interface Port {
  ip: string | null;
  public_port: number;
  private_port: number;
  protocol: string;
}

interface Container {
  name: string;
  image: string;
  state: string;
  ports: Port[];
}

interface Guest {
  vmid: number;
  name: string;
  type: string;
  node: string;
  status: string;
}

interface HostAnswer {
  host: string;
  availability?: string;
  swarm?: { role: string; cluster: string } | null;
  proxmox?: { node: string; cluster: string } | null;
  containers?: Container[];
  guests?: Guest[];
}

const MAX_LABEL = 80;

/** Fleet text as the inside of a quoted Mermaid label. */
export function mermaidLabel(text: string): string {
  const short = text.length > MAX_LABEL ? `${text.slice(0, MAX_LABEL - 1)}…` : text;
  return short.replace(/[^A-Za-z0-9 _.,:/@+=-]/gu, (c) => `#${c.codePointAt(0)};`);
}

function node(id: string, label: string, open = '[', close = ']'): string {
  return `  ${id}${open}"${mermaidLabel(label)}"${close}`;
}

function portText(port: Port): string {
  const address = port.ip && port.ip !== '0.0.0.0' && port.ip !== '::' ? `${port.ip}:` : '';
  return `${address}${port.public_port}→${port.private_port}/${port.protocol}`;
}

export function inventoryGraph(answers: readonly Record<string, unknown>[]): string {
  const hosts = [...(answers as unknown as HostAnswer[])].sort((a, b) => String(a.host).localeCompare(String(b.host)));
  const lines = ['flowchart LR'];
  const swarms = new Map<string, string>();
  const clusters = new Map<string, string>();
  const guestsSeen = new Set<string>();
  hosts.forEach((host, h) => {
    const id = `h${h}`;
    const unanswered = host.availability === 'unavailable';
    lines.push(node(id, `host ${host.host}${unanswered ? ' (no answer)' : ''}`));
    if (host.swarm) {
      const key = host.swarm.cluster || `unnamed swarm of ${host.host}`;
      let swarmId = swarms.get(key);
      if (!swarmId) {
        swarmId = `s${swarms.size}`;
        swarms.set(key, swarmId);
        lines.push(node(swarmId, `swarm ${key}`, '{{', '}}'));
      }
      lines.push(`  ${id} -- "${mermaidLabel(host.swarm.role)}" --- ${swarmId}`);
    }
    (host.containers ?? []).forEach((container, c) => {
      const containerId = `${id}c${c}`;
      lines.push(node(containerId, `${container.name} (${container.image}, ${container.state})`, '(', ')'));
      lines.push(`  ${id} --> ${containerId}`);
      // The engine lists a port once per address family: draw it once.
      [...new Set(container.ports.map(portText))].forEach((port, p) => {
        const portId = `${containerId}p${p}`;
        lines.push(node(portId, port, '([', '])'));
        lines.push(`  ${containerId} --- ${portId}`);
      });
    });
    if (host.proxmox) {
      const key = host.proxmox.cluster || `node ${host.proxmox.node}`;
      let clusterId = clusters.get(key);
      if (!clusterId) {
        clusterId = `x${clusters.size}`;
        clusters.set(key, clusterId);
        lines.push(node(clusterId, `PVE ${key}`, '{{', '}}'));
      }
      lines.push(`  ${id} -- "${mermaidLabel(`pve node ${host.proxmox.node}`)}" --- ${clusterId}`);
      for (const guest of host.guests ?? []) {
        // Every agent of a cluster sees all its guests: draw each once, under the cluster.
        const guestKey = `${key}/${guest.vmid}`;
        if (guestsSeen.has(guestKey)) continue;
        guestsSeen.add(guestKey);
        const guestId = `${clusterId}g${guest.vmid}`;
        lines.push(node(guestId, `${guest.type} ${guest.vmid} ${guest.name} on ${guest.node}, ${guest.status}`, '[/', '/]'));
        lines.push(`  ${clusterId} --> ${guestId}`);
      }
    }
  });
  return lines.join('\n');
}

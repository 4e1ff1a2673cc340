import { z } from 'zod';
import type { DomainParts, HostFacts } from '../domain-parts.ts';
import { proxmoxGuests } from './proxmox-actions.ts';

type Guest = { vmid: number; name: string; type: string; node: string; status: string };

const text = (facts: HostFacts, key: string): string => (typeof facts[key] === 'string' ? (facts[key] as string) : '');

/** The guests of each Proxmox VE cluster (or lone node), as its agents report them. */
export const proxmoxParts = {
  resourceTypes: {
    // Any agent of the cluster could have reported it: a grant on the reporting host covers what its API shows.
    guest: { scope: 'fleet', rank: 110, shownBy: ['host'] },
  },
  trust: [
    {
      check: 'proxmox_trust',
      category: 'proxmox',
      skipped: (facts) => facts.proxmox_insecure === true,
      summary: 'proxmox collector skips TLS verification (insecure mode)',
      subject: 'proxmox',
      message: "the Proxmox VE API's certificate is not checked (--proxmox-insecure)",
      action: 'Pin it with --proxmox-fingerprint or trust its CA with --proxmox-ca-file.',
    },
  ],
  inventory: {
    shape: {
      proxmox: z.object({ node: z.string(), cluster: z.string() }).nullable(),
      guests: z.array(z.object({ vmid: z.number(), name: z.string(), type: z.string(), node: z.string(), status: z.string() })),
    },
    counts: { guest_count: z.number().nullable() },
    columns: ['guest_count'],
    async scan(host) {
      const node = text(host.facts, 'proxmox_node');
      const fields = { proxmox: node ? { node, cluster: text(host.facts, 'proxmox_cluster') } : null };
      if (!host.collectors.some((c) => c.name === 'proxmox' && c.available)) return { fields: { ...fields, guests: [] }, counts: { guest_count: 0 } };
      const answer = await host.run(proxmoxGuests, {});
      const guests: Guest[] = answer.payload?.guests.map((g) => ({ vmid: g.vmid, name: g.name, type: g.type, node: g.node, status: g.status })) ?? [];
      return {
        fields: { ...fields, guests },
        counts: { guest_count: answer.payload ? guests.length : null },
        ...(answer.payload ? {} : { failed: ['proxmox'], errors: answer.errors.slice(0, 1) }),
      };
    },
    // Each cluster once, joined by each of its hosts with the host's node; every agent of a cluster sees all its guests: each is drawn once, under the cluster.
    graph: () => {
      const clusters = new Map<string, string>();
      const seen = new Set<string>();
      return (answer, draw) => {
        const pve = answer.proxmox as { node: string; cluster: string } | null | undefined;
        if (!pve) return;
        const key = pve.cluster || `node ${pve.node}`;
        let id = clusters.get(key);
        if (!id) {
          id = `x${clusters.size}`;
          clusters.set(key, id);
          draw.node(id, `PVE ${key}`, 'hexagon');
        }
        draw.edge(draw.host, id, '---', `pve node ${pve.node}`);
        for (const guest of (answer.guests as Guest[] | undefined) ?? []) {
          if (seen.has(`${key}/${guest.vmid}`)) continue;
          seen.add(`${key}/${guest.vmid}`);
          draw.node(`${id}g${guest.vmid}`, `${guest.type} ${guest.vmid} ${guest.name} on ${guest.node}, ${guest.status}`, 'slanted');
          draw.edge(id, `${id}g${guest.vmid}`, '-->');
        }
      };
    },
  },
} as const satisfies DomainParts;

import type { Incident } from '../../../shared/domains/watch/watch-incident.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { IndexContext, Indexer } from '../../index/indexer.ts';
import { incidentNotice } from './incident-notice.ts';

/** Incidents kept per host: the latest, for whoever follows the fleet's restarts. */
const KEEP_PER_HOST = 50;

/** The watch domain's index: each host's latest restart incidents, told as notices as they come. */
export class WatchIndexer implements Indexer {
  private readonly incidents = new Map<string, Incident[]>();

  constructor(private readonly context: IndexContext) {}

  take(host: Host, _kind: string, payload: unknown): void {
    const incident = payload as Incident;
    const list = this.incidents.get(host.id) ?? [];
    if (list.some((known) => known.id === incident.id)) return;
    list.push(incident);
    if (list.length > KEEP_PER_HOST) list.splice(0, list.length - KEEP_PER_HOST);
    this.incidents.set(host.id, list);
    this.context.changed('incidents', host.id);
    this.context.notice(incidentNotice(host, incident));
  }

  forget(hostId: string): void {
    this.incidents.delete(hostId);
  }
}

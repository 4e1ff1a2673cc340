import type { AlertCrossing } from '../../../shared/domains/system/alert-crossing.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { IndexContext, Indexer } from '../../index/indexer.ts';
import { crossingNotice } from './crossing-notice.ts';

/** The system domain's index: each host's alert crossings into warning or critical, told as notices as they come. Nothing is kept. */
export class SystemIndexer implements Indexer {
  constructor(private readonly context: IndexContext) {}

  take(host: Host, _kind: string, payload: unknown): void {
    const crossing = payload as AlertCrossing;
    if (crossing.state !== 'ok') this.context.notice(crossingNotice(host, crossing));
  }
}

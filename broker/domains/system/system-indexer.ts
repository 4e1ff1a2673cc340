import { EventEmitter } from 'node:events';
import type { AlertCrossing } from '../../../shared/domains/system/alert-crossing.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { Indexer } from '../../index/indexer.ts';

interface SystemEvents {
  /** A host's CPU, memory or disk changed alert state (the agent's report, checked against its schema). */
  crossing: [host: Host, crossing: AlertCrossing];
}

/** The system domain's index: each host's alert crossings as they come, for listeners (notifications). Nothing is kept. */
export class SystemIndexer extends EventEmitter<SystemEvents> implements Indexer {
  /** Takes nothing from the index's context (not EventEmitter's options). */
  // biome-ignore lint/complexity/noUselessConstructor: narrows EventEmitter's constructor to the one the index calls
  constructor() {
    super();
  }

  take(host: Host, _kind: string, payload: unknown): void {
    this.emit('crossing', host, payload as AlertCrossing);
  }

  forget(): void {}
}

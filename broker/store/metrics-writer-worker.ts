import { parentPort, workerData } from 'node:worker_threads';
import { MetricsTable } from './metrics-table.ts';
import { unpackRows, type WriterReply, type WriterRequest } from './metrics-writer.ts';
import { SqliteEngine } from './sqlite-engine.ts';

/**
 * The metrics writer's thread (metrics-writer.ts): its own connection to the
 * broker's SQLite file, and the metrics table's own batched writes over it,
 * one request at a time in the order they came.
 */
const port = parentPort;
if (port === null) throw new Error('metrics-writer-worker runs as a worker thread');
const { path } = (workerData as { data: { path: string } }).data;
const table = new MetricsTable(SqliteEngine.open(path, { create: false }));

let queue: Promise<void> = Promise.resolve();
port.on('message', (request: WriterRequest) => {
  queue = queue.then(async () => {
    const reply: WriterReply = { id: request.id };
    try {
      if (request.op === 'upsert') await table.upsert(unpackRows(request.rows));
      else await table.prune(request.before, request.maxRows);
    } catch (error) {
      reply.error = (error as Error).message;
    }
    port.postMessage(reply);
  });
});

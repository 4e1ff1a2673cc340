import { Worker } from 'node:worker_threads';

/**
 * What held this process's event loop, without a profiler: a profiler's start
 * alone holds a 10,000-agent broker long enough to drop agents. The main
 * thread counts turns of its loop into shared memory; a thread of its own
 * watches the count and, while it stands still for more than `holdMs`, pauses
 * the main thread through the inspector once a second, writes where it
 * stood, and lets it go on. Each hold is one line of JSON in `file`: when it
 * began, how long it lasted, and the stacks seen during it (innermost first).
 */
export function startLoopWatchdog(file: string, holdMs = 2000): () => Promise<void> {
  const turns = new Int32Array(new SharedArrayBuffer(4));
  const tick = setInterval(() => Atomics.add(turns, 0, 1), 50);
  tick.unref();
  const worker = new Worker(WATCHDOG, { eval: true, workerData: { turns, file, holdMs } });
  worker.unref();
  return async () => {
    clearInterval(tick);
    await worker.terminate();
  };
}

// The watch's interval starts at once: until it does, nothing holds the thread's loop open, and a thread whose
// loop empties ends before the inspector answers.
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const { Session } = require('node:inspector');
const { appendFileSync } = require('node:fs');
const { turns, file, holdMs } = workerData;
const session = new Session();
session.connectToMainThread();
const scripts = new Map();
session.on('Debugger.scriptParsed', ({ params }) => scripts.set(params.scriptId, params.url));
let enabled = false;
let hold = null;
let pausing = false;
session.on('Debugger.paused', ({ params }) => {
  const stack = params.callFrames.slice(0, 14).map((frame) => {
    const url = (scripts.get(frame.location.scriptId) || '').replace(/^.*\\/(broker|shared|node_modules|bench)\\//, '$1/');
    return (frame.functionName || '(anonymous)') + ' ' + url + ':' + (frame.location.lineNumber + 1);
  });
  if (hold) hold.stacks.push({ at_ms: Date.now() - hold.started, stack });
  session.post('Debugger.resume', () => { pausing = false; });
});
session.post('Debugger.enable', () => { enabled = true; });
let last = Atomics.load(turns, 0);
let lastChange = Date.now();
let lastPause = 0;
setInterval(() => {
  const now = Date.now();
  const count = Atomics.load(turns, 0);
  if (count !== last) {
    if (hold) {
      hold.duration_ms = now - hold.started;
      appendFileSync(file, JSON.stringify(hold) + '\\n');
      hold = null;
    }
    last = count;
    lastChange = now;
    return;
  }
  if (!enabled || now - lastChange < holdMs) return;
  if (!hold) hold = { started: lastChange, started_iso: new Date(lastChange).toISOString(), stacks: [] };
  if (!pausing && now - lastPause >= 1000) {
    pausing = true;
    lastPause = now;
    session.post('Debugger.pause');
  }
}, 100);
`;

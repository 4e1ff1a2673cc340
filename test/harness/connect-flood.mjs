// A flood of TCP connections from one source address, in a process of its own
// so that its load is not the broker's. It opens connections at a rate, up to
// a number open at once, each sending a fixed text (or nothing: a bare
// connect) and then holding it until the server closes it or, when a hold is
// given, resetting it after a random part of that hold. It prints what it did,
// a line every 100 ms: `connects=N open=N closed_by_server=N failed=N`.
// Plain JavaScript, so it starts fast without a TypeScript loader.
import { connect } from 'node:net';

const { host, port, from, perSecond, maxOpen, holdMs, send } = JSON.parse(process.argv[2]);
const TICK_MS = 10;
let connects = 0;
let open = 0;
let closedByServer = 0;
let failed = 0;
let owed = 0;

function dial() {
  const socket = connect({ host, port, localAddress: from });
  open += 1;
  let mine = false;
  let connected = false;
  let timer;
  socket.on('connect', () => {
    connected = true;
    connects += 1;
    if (send) socket.write(send);
    if (holdMs > 0) {
      timer = setTimeout(() => {
        mine = true;
        socket.resetAndDestroy();
      }, Math.random() * holdMs);
    }
  });
  socket.on('error', () => {});
  socket.on('data', () => {});
  socket.on('close', () => {
    clearTimeout(timer);
    open -= 1;
    if (!connected) failed += 1;
    else if (!mine) closedByServer += 1;
  });
}

setInterval(() => {
  owed += (perSecond * TICK_MS) / 1000;
  for (; owed >= 1; owed -= 1) if (open < maxOpen) dial();
}, TICK_MS);
setInterval(() => process.stdout.write(`connects=${connects} open=${open} closed_by_server=${closedByServer} failed=${failed}\n`), 100);

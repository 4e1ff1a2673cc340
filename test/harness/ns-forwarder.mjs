// Run inside a network namespace: accepts TCP connections on HOST:PORT and
// pipes each one to a Unix socket (which crosses namespaces, being a path), so
// an agent in another namespace reaches a broker on the test's loopback.
// Plain JavaScript, so it starts fast without a TypeScript loader.
import { connect, createServer } from 'node:net';

const [listen, path] = process.argv.slice(2);
const [host, port] = listen.split(/:(?=\d+$)/);
const server = createServer((socket) => {
  const upstream = connect(path);
  socket.pipe(upstream).pipe(socket);
  socket.on('error', () => upstream.destroy());
  upstream.on('error', () => socket.destroy());
  socket.on('close', () => upstream.destroy());
  upstream.on('close', () => socket.destroy());
});
server.listen(Number(port), host, () => process.stdout.write('forwarding\n'));

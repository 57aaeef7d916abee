// Graceful close: in-flight requests finish, and connections with nothing in flight do not hold it.
import net from 'node:net';
import { listen } from '../../lib/http-server';

const connect = async (url: string) => {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.on('error', () => undefined);
  return socket;
};

it('closes at once past a connection that never sent a request, and lets an in-flight request finish', async () => {
  let release!: () => void;
  let arrived!: () => void;
  const inFlight = new Promise<void>((resolve) => (arrived = resolve));
  const server = await listen(
    (req, res) => {
      if (req.url === '/slow') {
        release = () => res.end('done');
        arrived();
      } else res.end('ok');
    },
    0,
    '127.0.0.1',
  );
  const silent = await connect(server.url); // opened ahead, as HTTP clients do
  const slow = fetch(`${server.url}/slow`).then((r) => r.text());
  await inFlight; // the request is in the server's hands before it closes

  const started = Date.now();
  const closing = server.close(10_000);
  setTimeout(() => release(), 300);
  expect(await slow).toBe('done'); // the in-flight request was allowed to finish
  await closing;
  expect(Date.now() - started).toBeLessThan(2000); // not held for the 10 s grace by the silent connection
  silent.destroy();
});

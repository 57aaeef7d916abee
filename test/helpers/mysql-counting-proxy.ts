// A TCP proxy to MySQL that counts the commands its clients send (used by bench/fanout.ts too): a
// server whose DATABASE_URL points here is measured on its own connections only, whatever else
// the shared MySQL server answers meanwhile.
import net, { type AddressInfo } from 'node:net';

export interface CountingProxy {
  port: number;
  /** Commands sent so far (client packets with sequence id 0: a query, a prepare, an execute, a ping…). */
  commands(): number;
  /** The statements' texts sent so far (COM_QUERY and COM_STMT_PREPARE), the first 120 characters of each. */
  texts(): string[];
  close(): Promise<void>;
}

export async function mysqlCountingProxy(target: URL): Promise<CountingProxy> {
  let commands = 0;
  const texts: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 3306), target.hostname);
    sockets.add(client).add(upstream);
    // Client → server: [3-byte length][sequence id][payload]; a command starts at sequence 0.
    let pending: Buffer = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= 4) {
        const length = pending.readUIntLE(0, 3);
        if (pending.length < 4 + length) break;
        if (pending[3] === 0) {
          commands++;
          // COM_QUERY (3) and COM_STMT_PREPARE (22) carry the statement's text.
          if (length > 1 && (pending[4] === 3 || pending[4] === 22))
            texts.push(pending.subarray(5, 5 + Math.min(length - 1, 120)).toString('utf8'));
        }
        pending = pending.subarray(4 + length);
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    commands: () => commands,
    texts: () => texts,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

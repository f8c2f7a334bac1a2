import { once } from 'node:events';
import net from 'node:net';

/** A loopback port free right now, for a daemon a bench starts (closed again before it is returned). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

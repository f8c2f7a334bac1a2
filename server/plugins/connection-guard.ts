/**
 * The connection cap and the first-request deadline, kept here rather than
 * by Node, because Node's own leave the daemon open to idle connections:
 * - `server.maxConnections` refuses every new connection once the cap is
 *   reached, however many of the open ones sit idle, so a client holding
 *   1,100 silent sockets locked everyone out (issue 22);
 * - Node's headers timeout only runs once a request's first byte arrived:
 *   a connection that never sends anything is never closed.
 * So: a connection that has not delivered a complete request within the
 * header timeout of connecting is closed, and at the cap the connection idle
 * the longest (no request in flight: between keep-alive requests, or none
 * sent yet) is closed to make room. Only when every open connection has a
 * request in flight (an event stream, a body arriving) is a new one refused.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

interface TrackedConnection {
  connectedAtMs: number;
  /** When its last request ended, or when it connected. */
  idleSinceMs: number;
  inFlight: number;
  requests: number;
}

export interface ConnectionGuardOptions {
  maxConnections: number;
  /** A connection must deliver its first request's headers within this. */
  firstRequestTimeoutMs: number;
  /** How often connections without a request are looked at. */
  sweepMs: number;
  now?: () => number;
}

export class ConnectionGuard {
  private readonly connections = new Map<Socket, TrackedConnection>();
  private readonly now: () => number;
  private sweeper: NodeJS.Timeout | null = null;
  /** Connections closed to make room, and ones refused because none was idle. */
  evicted = 0;
  refused = 0;

  constructor(
    server: Server,
    private readonly options: ConnectionGuardOptions,
  ) {
    this.now = options.now ?? Date.now;
    server.on('connection', (socket: Socket) => this.onConnection(socket));
    server.on('request', (request: IncomingMessage, response: ServerResponse) => this.onRequest(request, response));
    server.on('listening', () => this.startSweeping());
    server.on('close', () => this.stopSweeping());
  }

  get open(): number {
    return this.connections.size;
  }

  private onConnection(socket: Socket): void {
    if (this.connections.size >= this.options.maxConnections && !this.closeIdlest()) {
      this.refused++;
      socket.destroy();
      return;
    }
    const now = this.now();
    this.connections.set(socket, { connectedAtMs: now, idleSinceMs: now, inFlight: 0, requests: 0 });
    socket.once('close', () => this.connections.delete(socket));
  }

  private onRequest(request: IncomingMessage, response: ServerResponse): void {
    const tracked = this.connections.get(request.socket);
    if (!tracked) return;
    tracked.inFlight++;
    tracked.requests++;
    response.once('close', () => {
      tracked.inFlight--;
      tracked.idleSinceMs = this.now();
    });
  }

  /** Closes the connection idle the longest; false when every one has a request in flight. */
  private closeIdlest(): boolean {
    let idlest: [Socket, TrackedConnection] | null = null;
    for (const entry of this.connections) {
      if (entry[1].inFlight > 0) continue;
      if (!idlest || entry[1].idleSinceMs < idlest[1].idleSinceMs) idlest = entry;
    }
    if (!idlest) return false;
    this.connections.delete(idlest[0]);
    idlest[0].destroy();
    this.evicted++;
    return true;
  }

  /** Closes connections that sent no complete request within the deadline (partial headers get Node's 408 first). */
  sweep(): void {
    const deadline = this.now() - this.options.firstRequestTimeoutMs;
    for (const [socket, tracked] of this.connections) {
      if (tracked.requests === 0 && tracked.connectedAtMs <= deadline) {
        this.connections.delete(socket);
        socket.destroy();
      }
    }
  }

  private startSweeping(): void {
    this.stopSweeping();
    this.sweeper = setInterval(() => this.sweep(), this.options.sweepMs);
    this.sweeper.unref();
  }

  private stopSweeping(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }
}

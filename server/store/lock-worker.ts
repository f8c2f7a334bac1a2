/** The lock thread's entry (./lock-thread.ts): a LockKeeper answering the daemon's thread. */
import { parentPort } from 'node:worker_threads';
import { LockKeeper, type LockRequest } from './lock-keeper.js';

const port = parentPort;
if (!port) throw new Error('lock-worker.ts runs as a worker thread');
const keeper = new LockKeeper((reply) => port.postMessage(reply));
port.on('message', (request: LockRequest) => keeper.handle(request));

/**
 * The daemon under soak (bench/soak.ts forks this): the real createDaemon,
 * listen and boot, as server/main.ts does, plus answers to the parent's
 * `stats` messages — RSS, heap, open descriptors and event-loop delay,
 * measured inside the process where they live.
 */
import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { loadConfig } from '../server/config.js';
import { createDaemon } from '../server/daemon.js';

export interface SoakStats {
  type: 'stats';
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  openFds: number;
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
}

const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();

const config = loadConfig(process.env, []);
const daemon = await createDaemon(config, { logger: pino({ level: config.logLevel }) });
const url = await daemon.app.listen({ host: config.host, port: config.port });
await daemon.start();
process.send?.({ type: 'ready', url });

process.on('message', (message: { type?: string }) => {
  if (message.type === 'stats') {
    const memory = process.memoryUsage();
    const stats: SoakStats = {
      type: 'stats',
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      heapTotalBytes: memory.heapTotal,
      openFds: readdirSync('/proc/self/fd').length,
      eventLoopP99Ms: delay.percentile(99) / 1e6,
      eventLoopMaxMs: delay.max / 1e6,
    };
    delay.reset();
    process.send?.(stats);
  } else if (message.type === 'stop') {
    void daemon.close().then(() => process.exit(0));
  }
});

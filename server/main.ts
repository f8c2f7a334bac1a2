/**
 * The daemon's entry point: owns the logger, listen, signals and graceful
 * close (STYLE.md: app.ts composes, main.ts runs).
 */
import pino from 'pino';
import { ConfigError, loadConfig, usage } from './config.js';
import { createDaemon } from './daemon.js';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usage());
    return;
  }
  let config;
  try {
    config = loadConfig(process.env, argv);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`topod: invalid configuration: ${error.message}`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  const logger = pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'config.adminToken', 'adminToken'], censor: '[redacted]' },
  });
  const { probeEnv, ...settings } = config;
  // The probe environment's names only: its values (PATH, LD_LIBRARY_PATH…) are the host's business.
  logger.info({ config: { ...settings, adminToken: config.adminToken ? '[set]' : null }, probeEnv: Object.keys(probeEnv) }, 'topod starting');
  const daemon = await createDaemon(config, { logger });

  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('graceful shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    daemon.close().then(
      () => logger.info('stopped'),
      (error: unknown) => {
        logger.error({ err: error }, 'error while shutting down');
        process.exitCode = 1;
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  await daemon.start();
  const address = await daemon.app.listen({ host: config.host, port: config.port });
  logger.info({ address, db: config.dbPath }, 'topod listening');
}

main().catch((error: unknown) => {
  console.error('topod: failed to start:', error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});

/**
 * The daemon's entry point: owns the logger, listen, signals and graceful
 * close (STYLE.md: app.ts composes, main.ts runs).
 *
 * Start-up order: configuration, the native probe's check (one hello, run
 * while the rest loads), the database (locked, checked, opened), the HTTP
 * app, `listen` — and only then boot (GPUs enumerated, probes queued), so a
 * port in use stops a second daemon before it measures anything.
 * Anything that stops the start is one line on stderr naming what and the
 * fix, exit status 2; never a stack trace (it goes to the log at debug).
 */
import pino from 'pino';
import { checkExposure, ConfigError, loadConfig, unknownVariables, usage, type Config } from './config.js';
import type { Daemon } from './daemon.js';
import { ERROR_CODES, isErrorCode, StartupError } from './errors.js';
import { selectConfiguredBackend } from './gpu/select-backend.js';

const SHUTDOWN_GRACE_MS = 10_000;
const STARTUP_FAILED = 2;

/** One line for anything that stopped the start; errors with a stable code keep their own wording. */
export function startupLine(error: unknown, config: Pick<Config, 'host' | 'port'> | null): string {
  if (error instanceof ConfigError) return `topod: invalid configuration: ${error.message}`;
  const code = error !== null && typeof error === 'object' && 'code' in error ? String(error.code) : '';
  const text = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  if (config && (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')) {
    const fix =
      code === 'EADDRINUSE'
        ? 'another process (another topod?) listens there: stop it, or set TOPOD_PORT (--port)'
        : 'choose another TOPOD_HOST / TOPOD_PORT (ports below 1024 need privileges)';
    return `topod: cannot start: [${ERROR_CODES.LISTEN}] cannot listen on ${config.host}:${config.port} (${code}): ${fix}`;
  }
  if (error instanceof StartupError || isErrorCode(code)) return `topod: cannot start: [${code}] ${text}`;
  return `topod: cannot start: [${ERROR_CODES.STARTUP}] ${text} (run with TOPOD_LOG_LEVEL=debug for the stack)`;
}

/**
 * The one human line a daemon with no measurement backend prints besides its
 * JSON log: a new user running `npm start` without a GPU learns that nothing
 * will be measured and how to see topod work anyway. The reason's own
 * simulator hint (select-backend's) is dropped: the line ends with it.
 */
export function noBackendLine(reason: string | null): string {
  const why = (reason ?? 'no measurement backend').replace(/ \(set TOPOD_BACKEND=sim[^)]*\)$/, '');
  return `topod: nothing is measured here (${why}); GPUs are listed but never probed. To try topod on a simulated H100: TOPOD_BACKEND=sim npm start`;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usage());
    return;
  }
  let config: Config;
  try {
    config = loadConfig(process.env, argv);
    checkExposure(config);
  } catch (error) {
    console.error(startupLine(error, null));
    process.exitCode = STARTUP_FAILED;
    return;
  }
  const logger = pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'config.adminToken', 'adminToken'], censor: '[redacted]' },
  });
  const { probeEnv, adminToken, ...settings } = config;
  const token = adminToken ? 'set' : 'none';
  // The probe environment's names only: its values (PATH, LD_LIBRARY_PATH…) are the host's business.
  logger.info({ config: settings, token, probeEnv: Object.keys(probeEnv) }, `topod starting (token: ${token})`);
  for (const { name, closest } of unknownVariables(process.env)) {
    logger.warn(
      { variable: name, closest },
      `${name} is not a topod setting and is ignored; did you mean ${closest}? (npm start -- --help lists them)`,
    );
  }
  if (config.insecure && token === 'none') {
    logger.warn(
      { host: config.host },
      `--insecure: listening on ${config.host} without an admin token; anyone who can reach it reads the topology (mutating requests stay loopback-only)`,
    );
  }

  // The native probe's check starts its process and GPU context now, while the daemon's modules (fastify,
  // SQLite, the discovery) load: a first topology waits on both (issue 19).
  const backendSelection = selectConfiguredBackend(config, logger);
  backendSelection.catch(() => undefined);
  let daemon: Daemon | null = null;
  let address: string;
  try {
    const { createDaemon } = await import('./daemon.js');
    daemon = await createDaemon(config, { logger, backendSelection });
    const { warmUpRequests } = await import('./api/warm-up.js');
    await warmUpRequests(daemon.app);
    address = await daemon.app.listen({ host: config.host, port: config.port });
    logger.debug({ address }, 'port bound; booting');
  } catch (error) {
    logger.debug({ err: error }, 'start-up failed');
    console.error(startupLine(error, config));
    await daemon?.close().catch(() => undefined);
    process.exit(STARTUP_FAILED);
  }
  const running = daemon;

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
    running.close().then(
      () => logger.info('stopped'),
      (error: unknown) => {
        logger.error({ err: error }, 'error while shutting down');
        process.exitCode = 1;
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  try {
    await running.start();
  } catch (error) {
    logger.error({ err: error }, 'boot failed');
    console.error(startupLine(error, config));
    await running.close().catch(() => undefined);
    process.exit(STARTUP_FAILED);
  }
  // Said once GPUs are enumerated: the port was bound before boot, so no probe ever starts on a port another daemon holds.
  logger.info({ address, db: config.dbPath, token }, 'topod listening');
  if (running.backend === null) console.error(noBackendLine(running.noBackendReason));
}

main().catch((error: unknown) => {
  console.error(startupLine(error, null));
  process.exit(STARTUP_FAILED);
});

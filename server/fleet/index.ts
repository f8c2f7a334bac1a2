/**
 * The fleet faces the daemon starts: today the NFD feature file, when
 * TOPOD_NFD_FEATURES_DIR is set. One call from server/daemon.ts, after the
 * GPUs are enumerated (so the first file already lists them).
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { TopologyApi } from '../model/topology-api.js';
import { TOPOD_VERSION } from '../version.js';
import { NfdFeatureWriter } from './nfd-writer.js';

export interface FleetFaces {
  close(): void;
}

export function startFleetFaces(config: Pick<Config, 'nfdFeaturesDir'>, topology: TopologyApi, logger: Logger): FleetFaces {
  if (config.nfdFeaturesDir === null) return { close: () => undefined };
  const writer = new NfdFeatureWriter({
    dir: config.nfdFeaturesDir,
    topology,
    logger,
    header: `topod ${TOPOD_VERSION}: GPU memory-hierarchy node labels for NFD (local source)`,
  });
  writer.start();
  logger.info({ file: writer.file }, `NFD labels: keeping ${writer.file} up to date`);
  return writer;
}

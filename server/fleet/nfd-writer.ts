/**
 * Keeps an NFD feature file (local source, `features.d`) in step with the
 * node's documents: recomputed when a GPU's document changes (a probe result,
 * a MIG change, a GPU added or removed), written only when its bytes change,
 * and always whole — a temporary dot-file (NFD skips dot-files) renamed over
 * the target, so nfd-worker never reads half a file.
 *
 * The file is kept when the daemon stops: labels that vanish on every restart
 * would make pods unschedulable for the seconds a restart takes. Removing
 * topod from a node means removing the file too (docs/operating.md, "Run on a cluster").
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { TopologyApi } from '../model/topology-api.js';
import { readGpuFacts } from './gpu-documents.js';
import { featureFileText, nodeLabels } from './labels.js';

export const FEATURE_FILE_NAME = 'topod';

export interface NfdWriterOptions {
  dir: string;
  topology: Pick<TopologyApi, 'listGpus' | 'getTopology' | 'subscribe'>;
  logger: Pick<Logger, 'info' | 'warn' | 'debug'>;
  /** First line of the file (the topod version). */
  header: string;
  /** Events arriving within this many ms are written once (a probe emits several). */
  debounceMs?: number;
}

export class NfdFeatureWriter {
  readonly file: string;
  private written: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  /** How many times the file was actually (re)written: tests and the log read it. */
  writes = 0;

  constructor(private readonly options: NfdWriterOptions) {
    this.file = path.join(options.dir, FEATURE_FILE_NAME);
  }

  /** Writes the current labels (unless the file already holds them) and follows every change after. */
  start(): void {
    try {
      this.written = readFileSync(this.file, 'utf8');
    } catch {
      this.written = null;
    }
    this.refresh();
    this.unsubscribe = this.options.topology.subscribe((event) => {
      if (event.type === 'probe.progress') return;
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.refresh();
    }, this.options.debounceMs ?? 200);
    this.timer.unref();
  }

  /** Recomputes the labels and writes the file if its text changed; returns whether it wrote. Never throws. */
  refresh(): boolean {
    let text: string;
    try {
      text = featureFileText(nodeLabels(readGpuFacts(this.options.topology)), this.options.header);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'NFD labels could not be computed; the feature file is left as it was');
      return false;
    }
    if (text === this.written) return false;
    const tmp = path.join(this.options.dir, `.${FEATURE_FILE_NAME}.${process.pid}.tmp`);
    try {
      mkdirSync(this.options.dir, { recursive: true });
      writeFileSync(tmp, text, { mode: 0o644 });
      renameSync(tmp, this.file);
    } catch (error) {
      try {
        rmSync(tmp, { force: true });
      } catch {
        // the folder itself is unusable: nothing was left behind
      }
      this.options.logger.warn(
        { err: error, file: this.file },
        `the NFD feature file ${this.file} could not be written; node labels stay as they were`,
      );
      return false;
    }
    this.written = text;
    this.writes += 1;
    this.options.logger.info(
      { file: this.file, labels: text.split('\n').filter((l) => l && !l.startsWith('#')).length },
      'NFD feature file written',
    );
    return true;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}

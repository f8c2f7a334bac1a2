/**
 * Every command of the CLI, in the order `topod --help` lists them. A new
 * command is a file here exporting a CommandFactory, and one line below.
 */
import type { CommandFactory } from '../context.js';
import { completionCommand } from './completion.js';
import { exportCommand } from './export.js';
import { fitCommand } from './fit.js';
import { gpusCommand } from './gpus.js';
import { jobsCommand } from './jobs.js';
import { probeCommand } from './probe.js';
import { serveCommand } from './serve.js';
import { topologyCommand } from './topology.js';
import { trafficCommand } from './traffic.js';

export const COMMANDS: readonly CommandFactory[] = [
  serveCommand,
  gpusCommand,
  topologyCommand,
  probeCommand,
  jobsCommand,
  exportCommand,
  fitCommand,
  trafficCommand,
  completionCommand,
];

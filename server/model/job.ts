/** Probe jobs as the store keeps them and the API shows them; ProbeJob is the Static<> type of its schema (./job-schema.ts). */
import type { JobState, ProbeJob } from './job-schema.js';

export { JOB_STATES } from './job-schema.js';
export type { JobState, ProbeJob } from './job-schema.js';

/** idle: a busy GPU's probe waits for it; always: measure whoever else is there (the result says so). */
export const PROBE_WHEN = ['idle', 'always'] as const;
export type ProbeWhen = (typeof PROBE_WHEN)[number];

/** A GPU's job that has not ended: at most one per GPU. `waiting`: the GPU is busy with other processes (phase says why). */
export const ACTIVE_JOB_STATES = ['queued', 'waiting', 'running'] as const;

export interface JobQuery {
  gpu?: string;
  state?: JobState;
  limit?: number;
}

/** Where a page of jobs ends: the last job's creation time and id (the order is created_at, then id, both descending). */
export interface JobPosition {
  createdAt: string;
  id: string;
}

/** One page of jobs, newest first; `next` is where the following page starts, null on the last. */
export interface JobPage {
  jobs: ProbeJob[];
  next: JobPosition | null;
}

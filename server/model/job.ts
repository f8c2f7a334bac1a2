/** Probe jobs as the store keeps them and the API shows them. */
import type { ProbeTarget } from './document.js';

export const JOB_STATES = ['queued', 'waiting', 'running', 'succeeded', 'failed', 'cancelled'] as const;
/** A GPU's job that has not ended: at most one per GPU. `waiting`: the GPU is busy with other processes (phase says why). */
/** idle: a busy GPU's probe waits for it; always: measure whoever else is there (the result says so). */
export const PROBE_WHEN = ['idle', 'always'] as const;
export type ProbeWhen = (typeof PROBE_WHEN)[number];

export const ACTIVE_JOB_STATES = ['queued', 'waiting', 'running'] as const;
export type JobState = (typeof JOB_STATES)[number];

export interface ProbeJob {
  id: string;
  gpuUuid: string;
  state: JobState;
  phase: string | null;
  progress: number; // 0..1
  error: { code: string; message: string } | null;
  reason: string; // why it was queued: "first-probe", "driver-changed", "requested", ...
  requestedBy: string; // "boot", "nvml-change" (a GPU appeared or its driver changed), "api:<client address>"
  only: ProbeTarget[] | null;
  force: boolean;
  /** Measure even while other processes use the GPU (the result then says it was measured on a busy GPU). */
  evenIfBusy: boolean;
  /** When the job first found its GPU busy; null when it never waited. */
  waitingSince: string | null;
  resultId: number | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

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

/** Probe jobs as the store keeps them and the API shows them. */
import type { ElementName } from './document.js';

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
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
  only: ElementName[] | null;
  force: boolean;
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

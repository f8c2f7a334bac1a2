/** URLs the API hands out, built in one place so routes and problems agree. */
import type { ProbeJob } from '../model/job.js';

export const API_PREFIX = '/v1';

export function jobPath(jobId: string): string {
  return `${API_PREFIX}/jobs/${encodeURIComponent(jobId)}`;
}

/** RFC 8288 Link to the job to watch (rel "monitor", RFC 5989). */
export function jobLinkHeader(jobId: string): string {
  return `<${jobPath(jobId)}>; rel="monitor"`;
}

/** Problem extension members that point at a job. */
export function jobExtensions(job: ProbeJob): { job: ProbeJob; jobUrl: string } {
  return { job, jobUrl: jobPath(job.id) };
}

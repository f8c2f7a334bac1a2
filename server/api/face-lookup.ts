/**
 * The document a face route (fit, picture, MT4G export) works from, with the
 * topology route's answers when there is none: 404 for an unknown GPU, 503
 * with Retry-After and the job while the first probe runs, 503 when it cannot
 * be measured.
 */
import type { FastifyInstance } from 'fastify';
import { TopologyPendingError, TopologyUnavailableError } from '../errors.js';
import { isMigDocument, lookupDocument, type AnyTopologyDocument } from '../faces/documents.js';
import type { GpuTopologyDocument } from '../model/document.js';
import type { TopologyLookup } from '../model/topology-api.js';
import { unknownGpu } from './gpus.js';
import { jobExtensions, jobLinkHeader } from './links.js';

/** How long a client should wait before asking again while a probe runs. */
export const PENDING_RETRY_AFTER_SECONDS = 5;

/** The topology route's problem for a GPU with no document to serve: 503 while its probe runs or when it cannot be measured, 404 when unknown. */
export function notServed(lookup: Exclude<TopologyLookup, { kind: 'ready' }>, id: string): never {
  switch (lookup.kind) {
    case 'pending':
      throw new TopologyPendingError(`GPU "${id}" has not been measured yet; probe job ${lookup.job.id} is ${lookup.job.state}.`, {
        extensions: jobExtensions(lookup.job),
        headers: { 'retry-after': String(PENDING_RETRY_AFTER_SECONDS), link: jobLinkHeader(lookup.job.id) },
      });
    case 'unavailable':
      throw new TopologyUnavailableError(lookup.reason);
    case 'unknown':
      throw unknownGpu(id);
  }
}

/** The served document for `id` (a MIG UUID gives the instance view), or the topology route's problem. */
export function servedDocument(app: FastifyInstance, id: string): { document: AnyTopologyDocument; etag: string } {
  const lookup = lookupDocument(app.topology, id);
  if (lookup.kind === 'ready') return { document: lookup.document, etag: lookup.etag };
  return notServed(lookup, id);
}

/** The whole-GPU document: for a MIG UUID, its parent's (whose MIG view lists every profile). */
export function servedGpuDocument(app: FastifyInstance, id: string): { document: GpuTopologyDocument; etag: string } {
  const served = servedDocument(app, id);
  if (!isMigDocument(served.document)) return { document: served.document, etag: served.etag };
  const parent = servedDocument(app, served.document.parent.uuid);
  if (isMigDocument(parent.document)) throw unknownGpu(id);
  return { document: parent.document, etag: parent.etag };
}

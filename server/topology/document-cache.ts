import type { ResultDocument } from '../model/document.js';
import type { PreparedDocument } from '../model/topology-api.js';
import { mergeMigInstance, mergeTopology, type DynamicPart, type StatusPart } from './merge.js';
import { prepareDocument } from './prepare.js';

interface CachedGpu {
  document: PreparedDocument;
  /** lower-case MIG device UUID → its instance view */
  mig: Map<string, PreparedDocument>;
}

/**
 * The documents the API hands out, serialised once per change. A document
 * keeps its ETag (and object) while its bytes stay the same, so polling
 * clients get 304s and no event fires for a no-op refresh.
 */
export class DocumentCache {
  private readonly gpus = new Map<string, CachedGpu>();

  /** Rebuilds one GPU's documents; returns the new ETag when the whole-GPU document changed, else null. */
  update(
    gpuUuid: string,
    result: ResultDocument | null,
    status: StatusPart,
    dynamic: DynamicPart,
    migDeviceUuids: readonly string[],
  ): string | null {
    if (!result) {
      this.gpus.delete(gpuUuid);
      return null;
    }
    const previous = this.gpus.get(gpuUuid);
    const merged = mergeTopology(result, status, dynamic);
    const next = prepareDocument(merged);
    const document = previous?.document.etag === next.etag ? previous.document : next;
    const mig = new Map<string, PreparedDocument>();
    for (const uuid of migDeviceUuids) {
      const view = mergeMigInstance(merged, uuid);
      if (!view) continue;
      const key = uuid.toLowerCase();
      const prepared = prepareDocument(view);
      const old = previous?.mig.get(key);
      mig.set(key, old?.etag === prepared.etag ? old : prepared);
    }
    this.gpus.set(gpuUuid, { document, mig });
    return document === previous?.document ? null : document.etag;
  }

  get(gpuUuid: string, migDeviceUuid: string | null = null): PreparedDocument | null {
    const cached = this.gpus.get(gpuUuid);
    if (!cached) return null;
    return migDeviceUuid ? (cached.mig.get(migDeviceUuid.toLowerCase()) ?? null) : cached.document;
  }
}

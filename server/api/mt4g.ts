/** The MT4G answer of GET /v1/gpus/{id}/topology (format=mt4g or Accept: application/vnd.mt4g+json). */
import { cpus, release, type } from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ExportIncompleteError } from '../errors.js';
import { isMigDocument } from '../faces/documents.js';
import { MT4G_MEDIA_TYPE, mt4gJson, mt4gRunRecord, type Mt4gHost } from '../faces/mt4g-export.js';
import { servedDocument, servedGpuDocument } from './face-lookup.js';
import { formatEtag, ifNoneMatchHits } from './http-cache.js';

const exported = new WeakMap<object, string>();

/** MT4G's hostCpu and os: the probes run on the daemon's host, so its CPU model and uname (sysname release) are theirs. */
export function daemonHost(): Mt4gHost {
  const cpuModel = cpus()[0]?.model.trim();
  return { cpuModel: cpuModel ? cpuModel : null, osName: `${type()} ${release()}` };
}

export function sendMt4g(app: FastifyInstance, id: string, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const served = servedDocument(app, id);
  const migDevice = isMigDocument(served.document) ? served.document : undefined;
  const parent = migDevice
    ? servedGpuDocument(app, id).document
    : (served.document as Exclude<typeof served.document, typeof migDevice & object>);
  const etag = formatEtag(`${served.etag.replaceAll('"', '')}-mt4g`);
  reply.header('etag', etag).header('cache-control', 'no-cache');
  if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send();
  let body = exported.get(served.document);
  if (body === undefined) {
    const gpuDocument = parent as Parameters<typeof mt4gJson>[0];
    // MT4G's compute and general sections come from the device properties; sys-sage divides by their SM count.
    if (gpuDocument.device.multiprocessorCount === undefined) {
      throw new ExportIncompleteError(
        `GPU ${id}: its result was rebuilt from raw series recorded without the probe's hello, so it has no device properties to export; probe it again (POST /v1/gpus/${id}/probe)`,
      );
    }
    body = mt4gJson(gpuDocument, { run: mt4gRunRecord(gpuDocument, daemonHost()), ...(migDevice ? { migDevice } : {}) });
    exported.set(served.document, body);
  }
  return reply.type(`${MT4G_MEDIA_TYPE}; charset=utf-8`).send(body);
}

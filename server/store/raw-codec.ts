import { constants, gunzipSync, gzipSync } from 'node:zlib';
import type { RawSeries } from '../model/document.js';

/** How a raw series is kept in `raw_series.data`: its args and result as gzipped JSON. */
export const RAW_ENCODING = 'json+gzip';

/** A raw series as stored: what the analysis worker hands back, so the event loop never gzips. */
export interface EncodedRawSeries {
  name: string;
  op: string;
  encoding: string;
  data: Uint8Array;
}

/**
 * gzip's fastest level: on a full discovery's series (5 MB of JSON) it takes
 * a sixth of the default level's time for a fifth more bytes, and a first
 * topology waits on it (issue 19).
 */
const GZIP_LEVEL = constants.Z_BEST_SPEED;

export function encodeRawSeries(series: RawSeries): EncodedRawSeries {
  const json = JSON.stringify({ args: series.args, result: series.result });
  // Copied into a buffer of its own, exactly its size: zlib hands back a view of a larger one, which a message to
  // another thread would copy whole, and which could not be moved to the result writer (result-writer.ts).
  return { name: series.name, op: series.op, encoding: RAW_ENCODING, data: new Uint8Array(gzipSync(json, { level: GZIP_LEVEL })) };
}

export function decodeRawSeries(row: EncodedRawSeries): RawSeries {
  if (row.encoding !== RAW_ENCODING) throw new Error(`raw series "${row.name}" has unknown encoding ${row.encoding}`);
  const { args, result } = JSON.parse(gunzipSync(row.data).toString('utf8')) as { args: unknown; result: unknown };
  return { name: row.name, op: row.op, args, result };
}

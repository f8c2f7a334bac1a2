import { gunzipSync, gzipSync } from 'node:zlib';
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

export function encodeRawSeries(series: RawSeries): EncodedRawSeries {
  return { name: series.name, op: series.op, encoding: RAW_ENCODING, data: gzipSync(JSON.stringify({ args: series.args, result: series.result })) };
}

export function decodeRawSeries(row: EncodedRawSeries): RawSeries {
  if (row.encoding !== RAW_ENCODING) throw new Error(`raw series "${row.name}" has unknown encoding ${row.encoding}`);
  const { args, result } = JSON.parse(gunzipSync(row.data).toString('utf8')) as { args: unknown; result: unknown };
  return { name: row.name, op: row.op, args, result };
}

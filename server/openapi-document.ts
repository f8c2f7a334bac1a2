/**
 * Renders the OpenAPI document from the route schemas, without a daemon: the
 * app is built around an inert topology, asked for its spec, and closed.
 * Keys are sorted so the committed openapi/openapi.json diffs cleanly.
 */
import { buildApp } from './app.js';
import { inertTopology } from './api/inert-topology.js';

export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeysDeep((value as Record<string, unknown>)[key]);
  return sorted;
}

export async function renderOpenApi(version: string): Promise<string> {
  const app = await buildApp({ config: { adminToken: null, bodyLimitBytes: 16 * 1024 }, topology: inertTopology(), version });
  try {
    await app.ready();
    return `${JSON.stringify(sortKeysDeep(app.swagger()), null, 2)}\n`;
  } finally {
    await app.close();
  }
}

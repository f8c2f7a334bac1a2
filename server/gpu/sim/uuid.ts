import { createHash } from 'node:crypto';

/** "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", stable for a model and index. */
export function simulatedGpuUuid(modelId: string, index: number): string {
  const hex = createHash('sha1').update(`topod-sim:${modelId}:${index}`).digest('hex');
  return `GPU-${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

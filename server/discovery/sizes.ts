/** Sweep size lists: sizes are multiples of `alignBytes`, strictly increasing, without repeats. */

export function alignDown(bytes: number, alignBytes: number): number {
  return Math.max(alignBytes, Math.floor(bytes / alignBytes) * alignBytes);
}

function distinctAscending(sizes: number[]): number[] {
  return [...new Set(sizes)].sort((a, b) => a - b);
}

/** From lowBytes to highBytes (both included) with `perOctave` points per doubling. */
export function geometricSizes(lowBytes: number, highBytes: number, perOctave: number, alignBytes: number): number[] {
  const steps = Math.ceil(Math.log2(highBytes / lowBytes) * perOctave);
  return distinctAscending(Array.from({ length: steps + 1 }, (_, i) => alignDown(lowBytes * 2 ** (i / perOctave), alignBytes)));
}

/** `count` evenly spaced sizes from lowBytes to highBytes. */
export function linearSizes(lowBytes: number, highBytes: number, count: number, alignBytes: number): number[] {
  const step = (highBytes - lowBytes) / Math.max(1, count - 1);
  return distinctAscending(Array.from({ length: count }, (_, i) => alignDown(lowBytes + i * step, alignBytes)));
}

/** Splits sizes into launches of at most `maxCount` sizes and `maxTotalBytes` in all (a lone larger size gets its own launch). */
export function chunkSizes(sizes: readonly number[], maxCount: number, maxTotalBytes: number): number[][] {
  const chunks: number[][] = [];
  let current: number[] = [];
  let total = 0;
  for (const size of sizes) {
    if (current.length > 0 && (current.length >= maxCount || total + size > maxTotalBytes)) {
      chunks.push(current);
      current = [];
      total = 0;
    }
    current.push(size);
    total += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

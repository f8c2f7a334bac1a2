/**
 * Joins sample arrays into one new array, in order. Array#concat copies
 * packed number arrays in bulk; flatMap and spreads in a loop cost an order
 * of magnitude more per value, and a sweep's samples number in the
 * hundreds of thousands.
 */
export function concatSamples(lists: ReadonlyArray<readonly number[]>): number[] {
  return ([] as number[]).concat(...lists);
}

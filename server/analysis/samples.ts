/**
 * Joins sample arrays into one new array, in order. Array#concat copies
 * packed number arrays in bulk; flatMap and spreads in a loop cost an order
 * of magnitude more per value, and a sweep's samples number in the
 * hundreds of thousands.
 */
export function concatSamples(lists: ReadonlyArray<readonly number[]>): number[] {
  return ([] as number[]).concat(...lists);
}

/**
 * A Float64Array copy (TypedArray#set copies a number array natively). Hot
 * loops read the copy: they then see one kind of array, where the callers'
 * arrays come in several (small integers, doubles, typed), and V8 compiles a
 * loop again for each kind it meets.
 */
export function float64Copy(values: ArrayLike<number>): Float64Array {
  const out = new Float64Array(values.length);
  out.set(values);
  return out;
}

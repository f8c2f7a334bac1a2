/**
 * A stricter guard than Equivalent (./equivalent.ts): mutual assignability
 * lets either side carry an extra *optional* field, which would slip through
 * a closed (additionalProperties: false) schema's type check and then fail
 * at validation. Identical compares the deep shapes, property by property,
 * optional markers included; intersections are flattened first, so
 * `A & { b: B }` and the same fields written out are identical.
 */
type Shape<T> = T extends readonly (infer U)[] ? Shape<U>[] : T extends object ? { [K in keyof T]: Shape<T[K]> } : T;

export type Identical<A, B> = (<T>() => T extends Shape<A> ? 1 : 2) extends <T>() => T extends Shape<B> ? 1 : 2 ? true : false;

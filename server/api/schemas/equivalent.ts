/**
 * Compile-time guard that a TypeBox schema and the contract interface it
 * documents describe the same type; a drift fails `tsc`, not a client.
 */
export type Equivalent<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

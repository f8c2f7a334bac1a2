/**
 * JSON as MT4G writes it: nlohmann's `dump(4)` — object keys in alphabetical
 * order (its objects are std::maps), four-space indentation, and a C++
 * double written as a double even when it is whole (`38.0`), where
 * JSON.stringify would write `38`. A reader that keeps JSON's number types
 * (Python's json, nlohmann's is_number_float) sees MT4G's types only if the
 * file keeps them, so the values MT4G holds in a double are marked with
 * `mt4gFloat` and written by `dumpMt4g`.
 */

const FLOAT = Symbol('mt4gFloat');

/** A number MT4G holds in a double: written with a fraction even when whole. */
export interface Mt4gFloat {
  readonly [FLOAT]: number;
}

export type Mt4gJson = null | boolean | number | string | Mt4gFloat | Mt4gJson[] | { [key: string]: Mt4gJson };
export type Mt4gObject = { [key: string]: Mt4gJson };
/** The same value as JSON.parse gives it back (floats unmarked). */
export type PlainJson = null | boolean | number | string | PlainJson[] | { [key: string]: PlainJson };

export function mt4gFloat(value: number): Mt4gFloat {
  return { [FLOAT]: value };
}

export function isMt4gFloat(value: unknown): value is Mt4gFloat {
  return typeof value === 'object' && value !== null && FLOAT in value;
}

/** A double as nlohmann writes it: the shortest round-trip digits, with ".0" when they hold no fraction or exponent. */
export function formatDouble(value: number): string {
  // nlohmann writes NaN and infinities as null, as JSON.stringify does.
  if (!Number.isFinite(value)) return 'null';
  const text = String(value);
  return /[.eE]/.test(text) ? text : `${text}.0`;
}

/** nlohmann::json keeps object keys in a std::map: alphabetical (by UTF-16 code unit, as std::string compares ASCII keys), recursively. */
export function sortKeys(value: Mt4gJson): Mt4gJson {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object' || isMt4gFloat(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys(value[key] as Mt4gJson)]),
  );
}

/** The value with every float mark taken off (what JSON.parse of `dumpMt4g` gives). */
export function plainJson(value: Mt4gJson): PlainJson {
  if (isMt4gFloat(value)) return value[FLOAT];
  if (Array.isArray(value)) return value.map(plainJson);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, plainJson(entry)]));
}

/** `dump(indent)`: keys in the order given (sort them first with sortKeys), floats marked by mt4gFloat written as doubles. */
export function dumpMt4g(value: Mt4gJson, indent = 4): string {
  const write = (node: Mt4gJson, depth: number): string => {
    if (isMt4gFloat(node)) return formatDouble(node[FLOAT]);
    if (node === null || typeof node !== 'object') return JSON.stringify(node) ?? 'null';
    const inner = ' '.repeat(indent * (depth + 1));
    const outer = ' '.repeat(indent * depth);
    if (Array.isArray(node)) {
      if (node.length === 0) return '[]';
      return `[\n${node.map((item) => inner + write(item, depth + 1)).join(',\n')}\n${outer}]`;
    }
    const keys = Object.keys(node);
    if (keys.length === 0) return '{}';
    return `{\n${keys.map((key) => `${inner}${JSON.stringify(key)}: ${write(node[key] as Mt4gJson, depth + 1)}`).join(',\n')}\n${outer}}`;
  };
  return write(value, 0);
}

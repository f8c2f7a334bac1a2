/**
 * Every leaf key path of a JSON text with its type as the text writes it —
 * `int` and `float` told apart by the literal (`38` vs `38.0`), which
 * JSON.parse loses — for comparing topod's MT4G export with MT4G's own files.
 * Array elements are one leaf (`array`), as MT4G's `sharedWith` lists are.
 */
export type LeafType = 'int' | 'float' | 'string' | 'bool' | 'null' | 'array';

export function jsonKeyPaths(text: string): Record<string, LeafType> {
  const out: Record<string, LeafType> = {};
  let at = 0;
  const space = () => {
    while (/\s/.test(text[at] ?? '')) at++;
  };
  const fail = (what: string): never => {
    throw new Error(`${what} at offset ${at}: ${text.slice(at, at + 20)}`);
  };
  const string = (): string => {
    const start = at;
    at++;
    while (text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const value = (path: string): void => {
    space();
    const c = text[at];
    if (c === '{') {
      at++;
      space();
      if (text[at] === '}') {
        at++;
        return;
      }
      for (;;) {
        space();
        const key = string();
        space();
        if (text[at++] !== ':') fail('expected :');
        value(path ? `${path}.${key}` : key);
        space();
        const next = text[at++];
        if (next === '}') return;
        if (next !== ',') fail('expected , or }');
      }
    }
    if (c === '[') {
      let depth = 0;
      do {
        if (text[at] === '"') string();
        else {
          if (text[at] === '[') depth++;
          if (text[at] === ']') depth--;
          at++;
        }
      } while (depth > 0);
      out[path] = 'array';
      return;
    }
    if (c === '"') {
      string();
      out[path] = 'string';
      return;
    }
    const literal = /^(true|false|null|-?\d+(\.\d+)?([eE][+-]?\d+)?)/.exec(text.slice(at)) ?? fail('unexpected');
    at += literal[0].length;
    const word = literal[0];
    out[path] = word === 'true' || word === 'false' ? 'bool' : word === 'null' ? 'null' : /[.eE]/.test(word) ? 'float' : 'int';
  };
  value('');
  return out;
}

/** The paths MT4G itself writes: topod's extension key and the conditions beside MT4G's run record left out. */
export function mt4gOwnPaths(paths: Record<string, LeafType>): Record<string, LeafType> {
  return Object.fromEntries(
    Object.entries(paths).filter(([path]) => !path.startsWith('topod.') && !path.startsWith('meta.topodConditions.')),
  );
}

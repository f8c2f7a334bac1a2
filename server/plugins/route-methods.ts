/**
 * Which methods each registered path accepts, so an unmatched request can be
 * told 405 + Allow instead of 404 when the path exists under another method.
 */
export class RouteMethodIndex {
  private readonly routes: Array<{ pattern: RegExp; methods: Set<string> }> = [];

  add(url: string, methods: string | string[]): void {
    const pattern = patternOf(url);
    const existing = this.routes.find((route) => route.pattern.source === pattern.source);
    const entry = existing ?? { pattern, methods: new Set<string>() };
    for (const method of Array.isArray(methods) ? methods : [methods]) entry.methods.add(method.toUpperCase());
    if (!existing) this.routes.push(entry);
  }

  /** Methods accepted on `path` (no query string), sorted; empty when the path is unknown. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (route.pattern.test(path)) for (const method of route.methods) methods.add(method);
    }
    return [...methods].sort();
  }
}

/** find-my-way syntax → RegExp: `:param` is one segment, `*` the rest. */
function patternOf(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}/?$`);
}

/**
 * The README is one screen that links onward into docs/: a moved or renamed
 * file or heading must not leave a link behind that leads nowhere. Every
 * relative link in README.md, CONTRIBUTING.md and docs/*.md must name a file
 * that exists and, with a `#fragment`, a heading of that file (GitHub's
 * anchors).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

function documents(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs];
}

/** The text outside fenced code blocks and inline code spans, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^\s*(```|~~~)[^\n]*\n[\s\S]*?^\s*\1[^\n]*$/gm, '').replace(/`+[^`\n]*`+/g, '');
}

/** Inline link targets `[text](target "title")` and reference definitions `[id]: target`. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!);
  return [...inline, ...references];
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  const plain = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return plain
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file offers: its headings' slugs (repeats get -1, -2, …) and explicit ids. */
function anchors(markdown: string): Set<string> {
  const result = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      result.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) result.add(id[1]!);
  }
  return result;
}

/** What is wrong with a relative link from `fromFile` (repository-relative), or null when it leads somewhere. */
function brokenReason(fromFile: string, target: string, read: (file: string) => string | null): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null;
  const hash = target.indexOf('#');
  const filePart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const fragment = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  const file = filePart === '' ? fromFile : path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), filePart));
  if (file.startsWith('../')) return `${target}: leads outside the repository`;
  const content = read(file);
  if (content === null) return `${target}: no file ${file}`;
  if (fragment === null || fragment === '') return null;
  if (!file.endsWith('.md')) return `${target}: a fragment on a file that is not Markdown`;
  return anchors(content).has(fragment) ? null : `${target}: ${file} has no heading #${fragment}`;
}

/** A file's text, '' for a folder, null when nothing is there. */
function readRepositoryFile(file: string): string | null {
  const full = path.join(ROOT, file);
  if (!existsSync(full)) return null;
  return statSync(full).isDirectory() ? '' : readFileSync(full, 'utf8');
}

describe('documentation links', () => {
  it('the checker finds links, anchors and what is broken (it is not vacuous)', () => {
    const sample =
      '# Top\n## Node 24.19 and later\n## `TOPOD_DB` — the file\n## Top\n```sh\n[not](a-link.md)\n```\n[a](docs/x.md#y) `[b](z.md)` [c](https://e.org)\n[d]: ../w.md\n';
    expect(linkTargets(sample)).toEqual(['docs/x.md#y', 'https://e.org', '../w.md']);
    expect([...anchors(sample)]).toEqual(['top', 'node-2419-and-later', 'topod_db--the-file', 'top-1']);
    const files: Record<string, string> = { 'docs/api.md': '# API\n## Error codes\n', 'README.md': sample };
    const read = (file: string): string | null => files[file] ?? null;
    expect(brokenReason('README.md', 'docs/api.md#error-codes', read)).toBeNull();
    expect(brokenReason('docs/api.md', '../README.md#node-2419-and-later', read)).toBeNull();
    expect(brokenReason('docs/api.md', '#error-codes', read)).toBeNull();
    expect(brokenReason('README.md', 'docs/api.md#caching', read)).toMatch(/no heading #caching/);
    expect(brokenReason('README.md', 'docs/gone.md', read)).toMatch(/no file docs\/gone\.md/);
    expect(brokenReason('README.md', '../shared/DESIGN.md', read)).toMatch(/outside the repository/);
    expect(brokenReason('README.md', 'https://example.org/#x', read)).toBeNull();
  });

  it('README.md links onward into docs/', () => {
    const targets = linkTargets(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    expect(targets.filter((target) => target.startsWith('docs/')).length).toBeGreaterThanOrEqual(5);
  });

  it('every relative link in README.md, CONTRIBUTING.md and docs/*.md leads to a file and heading that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of documents()) {
      for (const target of linkTargets(readFileSync(path.join(ROOT, file), 'utf8'))) {
        checked += 1;
        const reason = brokenReason(file, target, readRepositoryFile);
        if (reason) broken.push(`${file}: ${reason}`);
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });
});

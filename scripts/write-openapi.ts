/** `npm run openapi`: regenerates openapi/openapi.json from the route schemas. */
import { readFile, writeFile } from 'node:fs/promises';
import { renderOpenApi } from '../server/openapi-document.js';

const root = new URL('../', import.meta.url);
const { version } = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { version: string };
const target = new URL('openapi/openapi.json', root);
await writeFile(target, await renderOpenApi(version));
console.log(`wrote ${target.pathname}`);

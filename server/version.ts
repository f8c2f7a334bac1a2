import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './paths.js';

export const TOPOD_VERSION: string = (JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string })
  .version;

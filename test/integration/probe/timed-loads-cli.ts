/**
 * The timed-load check on a file of compiler output, for scripts/device/sass-check.sh:
 *   node --import tsx test/integration/probe/timed-loads-cli.ts sass pchase-sm_90.sass
 *   node --import tsx test/integration/probe/timed-loads-cli.ts ptx pchase.ptx
 *   node --import tsx test/integration/probe/timed-loads-cli.ts sass l2-farnear-sm_90.sass l2
 * Prints one line per timed window, then the problems; exits 1 when there are any.
 * The third argument `l2` checks the L2-structure kernels (every timed load
 * consumed) instead of pchase's (which also has the self-test).
 */
import { readFileSync } from 'node:fs';
import {
  checkAllConsumed,
  checkConsumers,
  l2KernelsOf,
  PCHASE_KERNELS,
  PTX_LOAD_KINDS,
  report,
  SASS_LOAD_CLASSES,
  timedWindows,
  type Dialect,
} from './timed-loads.js';

const [dialect, file, family] = process.argv.slice(2);
if ((dialect !== 'ptx' && dialect !== 'sass') || !file) {
  console.error('usage: timed-loads-cli.ts ptx|sass FILE');
  process.exit(2);
}
const d: Dialect = dialect;
const windows = timedWindows(readFileSync(file, 'utf8'), d);
console.log(report(windows, d));
const problems =
  family === 'l2'
    ? checkAllConsumed(windows, d, l2KernelsOf(file))
    : checkConsumers(windows, { dialect: d, ...PCHASE_KERNELS, expectedKinds: d === 'ptx' ? PTX_LOAD_KINDS : SASS_LOAD_CLASSES });
for (const p of problems) console.log(`FAIL ${p}`);
const fine =
  family === 'l2'
    ? 'every timed load feeds its stop clock'
    : "every timed load feeds its stop clock; the self-test's unconsumed loads do not";
console.log(problems.length ? `${file}: ${problems.length} problem(s)` : `${file}: ${fine}`);
process.exit(problems.length ? 1 : 0);

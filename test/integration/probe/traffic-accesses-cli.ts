/**
 * The traffic kernels' access check on a file of compiler output, for scripts/device/sass-check.sh:
 *   node --import tsx test/integration/probe/traffic-accesses-cli.ts sass traffic-sm_90.sass
 * Prints one line per pattern kernel, then the problems; exits 1 when there are any.
 */
import { readFileSync } from 'node:fs';
import { accessReport, checkTrafficAccesses, trafficAccesses } from './traffic-accesses.js';

const [dialect, file] = process.argv.slice(2);
if ((dialect !== 'ptx' && dialect !== 'sass') || !file) {
  console.error('usage: traffic-accesses-cli.ts ptx|sass FILE');
  process.exit(2);
}
const kernels = trafficAccesses(readFileSync(file, 'utf8'), dialect);
console.log(accessReport(kernels));
const problems = checkTrafficAccesses(kernels);
for (const p of problems) console.log(`FAIL ${p}`);
console.log(problems.length ? `${file}: ${problems.length} problem(s)` : `${file}: every traffic kernel keeps its loads and stores`);
process.exit(problems.length ? 1 : 0);

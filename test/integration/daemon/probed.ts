/** The probed databases the daemon tests start from (test/helpers/probed-database.ts). */
import type { ProbedDatabaseRequest } from '../../helpers/probed-database.js';

/** The simulated H100 a daemon without NVML measures (TOPOD_BACKEND=sim), probed once. */
export const SIM_PROBED: ProbedDatabaseRequest = {
  name: 'sim-h100',
  env: { TOPOD_BACKEND: 'sim', TOPOD_NVML_LIB: '/nonexistent/libnvidia-ml.so.1', TOPOD_LOCK_DIR: '' },
  gpus: ['0'],
};

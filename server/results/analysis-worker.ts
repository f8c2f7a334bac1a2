/**
 * A worker thread's entry (piscina): builds results with server/discovery's
 * analysis, so the daemon's event loop never runs one.
 */
import { DISCOVERY } from '../discovery/index.js';
import { analyseTask, type AnalysisProduct, type AnalysisTask } from './analysis-task.js';

export default function analyse(task: AnalysisTask): AnalysisProduct {
  return analyseTask(task, DISCOVERY);
}

/**
 * Runs tasks one at a time in arrival order: a probe (native or simulated)
 * measures one thing at a time. A task that fails does not stop the ones
 * queued behind it.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

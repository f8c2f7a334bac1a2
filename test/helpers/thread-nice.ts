import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Linux gives each thread its own nice value, readable in /proc; elsewhere these tests skip. */
export const HAVE_PER_THREAD_NICE = process.platform === 'linux' && existsSync('/proc/self/task');

/** Each thread of a process (thread id → nice), from /proc/<pid>/task/<tid>/stat; a thread that ended meanwhile is left out. */
export function threadNiceValues(pid: number | 'self' = 'self'): Map<number, number> {
  return new Map([...threadStats(pid)].map(([tid, { nice }]) => [tid, nice]));
}

/** Each thread of a process: its name (comm, e.g. libuv-worker) and nice value. */
export function threadStats(pid: number | 'self' = 'self'): Map<number, { name: string; nice: number }> {
  const threads = new Map<number, { name: string; nice: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // After "pid (comm) ": state is field 3 of stat(5), nice field 19.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    threads.set(Number(tid), { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(fields[16]) });
  }
  return threads;
}

/** The ids of a process's threads at `nice`, polled until there are at least `count` (or the deadline: then fewer). */
export async function waitForThreadsAtNice(pid: number | 'self', nice: number, count = 1, timeoutMs = 20_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const at = [...threadNiceValues(pid)].filter(([, value]) => value === nice).map(([tid]) => tid);
    if (at.length >= count || Date.now() > deadline) return at;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

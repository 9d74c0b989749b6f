// What a running Node process's RSS is made of, read from outside: the kernel's split of its
// resident pages (/proc/<pid>/status), and V8's own figures read through the inspector, which
// SIGUSR1 opens on 127.0.0.1:9229 and the probe closes again. One process at a time (the port is
// fixed); a process whose inspector cannot be reached gets the kernel's figures only.
import { readFile } from 'node:fs/promises';

export interface MemoryBreakdown {
  /** VmRSS, RssAnon (heap, malloc, stacks), RssFile (mapped files: the node binary's code, shared between processes), bytes. */
  rss: number;
  rssAnon: number;
  rssFile: number;
  /** V8 and Node's figures as `process.memoryUsage()` gives them, before and after a forced full GC; undefined when the inspector was not reachable. */
  v8?: { before: NodeJS.MemoryUsage; afterGc: NodeJS.MemoryUsage; rssAfterGc: number; codeSpace: number };
}

const INSPECTOR = 'http://127.0.0.1:9229';

/** The kernel's figures of process `pid`'s resident memory (/proc/<pid>/status), bytes. */
export async function kernelFigures(pid: number): Promise<{ rss: number; rssAnon: number; rssFile: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kib('VmRSS'), rssAnon: kib('RssAnon'), rssFile: kib('RssFile') };
}

/** The breakdown of process `pid` (a Node process this user may signal). */
export async function memoryBreakdown(pid: number): Promise<MemoryBreakdown> {
  const kernel = await kernelFigures(pid);
  // A port already open belongs to someone else: do not signal.
  if (await fetch(`${INSPECTOR}/json/list`).then(() => true, () => false)) return kernel;
  process.kill(pid, 'SIGUSR1');
  let url: string | undefined;
  for (let i = 0; i < 40 && url === undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const targets = await fetch(`${INSPECTOR}/json/list`).then((r) => r.json() as Promise<Array<{ webSocketDebuggerUrl?: string }>>, () => undefined);
    url = targets?.[0]?.webSocketDebuggerUrl;
  }
  if (url === undefined) return kernel;
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`inspector of ${pid} not reachable`)), { once: true });
  });
  let id = 0;
  const pending = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      pending.set(++id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  const evaluate = async <T>(expression: string): Promise<T> => {
    const result = (await call('Runtime.evaluate', { expression, includeCommandLineAPI: true, returnByValue: true })) as { result?: { value?: T } };
    return result.result!.value!;
  };
  try {
    const seenPid = await evaluate<number>('process.pid');
    if (seenPid !== pid) return kernel;
    const before = await evaluate<NodeJS.MemoryUsage>('process.memoryUsage()');
    await call('HeapProfiler.collectGarbage');
    const afterGc = await evaluate<NodeJS.MemoryUsage>('process.memoryUsage()');
    const codeSpace = await evaluate<number>("require('v8').getHeapSpaceStatistics().filter((s) => s.space_name.startsWith('code')).reduce((n, s) => n + s.space_used_size, 0)");
    const rssAfterGc = (await kernelFigures(pid)).rss;
    return { ...kernel, v8: { before, afterGc, rssAfterGc, codeSpace } };
  } finally {
    // The answer never comes: closing the inspector closes this socket.
    void call('Runtime.evaluate', { expression: "require('inspector').close()", includeCommandLineAPI: true });
    await new Promise((resolve) => setTimeout(resolve, 500));
    socket.close();
  }
}

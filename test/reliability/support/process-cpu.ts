// CPU time from the kernel's accounting (/proc): of one process (user + system, its own threads,
// not its children's) and of the whole machine (every core's busy time), in seconds. Linux only.
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** The kernel's clock ticks per second, in which /proc counts CPU time (`getconf CLK_TCK`). */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** The CPU time process `pid` has spent so far, in seconds. */
export async function processCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // After the command name, in parentheses and free to hold spaces: state is the 3rd field, utime the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** The machine's busy CPU time so far (every core: all but idle and iowait), in seconds. */
export async function machineBusySeconds(): Promise<number> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!;
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice; guest time is in user's already.
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / TICKS_PER_SECOND;
}

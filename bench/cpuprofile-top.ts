// The functions with the most self time in a V8 .cpuprofile (from `node --cpu-prof`), and the
// share of each package: `node bench/cpuprofile-top.ts FILE.cpuprofile [--top 40]`.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '40' } } });
const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfMicros = new Map<number, number>();
profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);

const where = (url: string): string => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url) ?? /packages\/([^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return url;
  return url === '' ? '(native)' : url.replace(/^.*\//, '');
};
const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const [id, micros] of selfMicros) {
  const { callFrame } = byId.get(id)!;
  const fn = `${callFrame.functionName || '(anonymous)'} ${where(callFrame.url)}:${callFrame.lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
  byPackage.set(where(callFrame.url), (byPackage.get(where(callFrame.url)) ?? 0) + micros);
}
const show = (title: string, entries: Map<string, number>, top: number): void => {
  console.log(`\n${title} (total ${(total / 1000).toFixed(0)} ms)`);
  for (const [name, micros] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(micros / 1000).toFixed(1).padStart(9)} ms ${((100 * micros) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
};
show('self time by function', byFunction, Number(values.top));
show('self time by package or file', byPackage, 25);

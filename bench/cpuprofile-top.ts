// The functions with the most self time in a V8 .cpuprofile (from `node --cpu-prof`), and the
// share of each package: `node bench/cpuprofile-top.ts FILE.cpuprofile [--top 40]`.
// `--from US --to US` keeps the samples between two points of the profile's clock (the admission
// bench prints its phase boundaries on it); `--callers REGEX` shows the call paths (5 frames up)
// of the functions whose name matches, by self time; `--inclusive` ranks functions by the time
// spent in them and what they call.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '40' }, from: { type: 'string' }, to: { type: 'string' }, callers: { type: 'string' }, inclusive: { type: 'boolean', default: false } },
});
const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const from = values.from === undefined ? -Infinity : Number(values.from);
const to = values.to === undefined ? Infinity : Number(values.to);
const selfMicros = new Map<number, number>();
let clock = profile.startTime;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  clock += delta;
  if (clock >= from && clock <= to) selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta);
});
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);
const idle = [...selfMicros].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, micros]) => a + micros, 0);

const where = (url: string): string => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url) ?? /packages\/([^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return url;
  return url === '' ? '(native)' : url.replace(/^.*\//, '');
};
/** The package, and for a file of this repository its path in the package's dist. */
const file = (url: string): string => /packages\/([^/]+)\/dist\/(.*)$/.exec(url)?.slice(1).join('/') ?? where(url);
const nameOf = (id: number): string => {
  const { callFrame } = byId.get(id)!;
  return `${callFrame.functionName || '(anonymous)'} ${file(callFrame.url)}:${callFrame.lineNumber + 1}`;
};
const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const [id, micros] of selfMicros) {
  const fn = nameOf(id);
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
  const pkg = where(byId.get(id)!.callFrame.url);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros);
}
const show = (title: string, entries: Map<string, number>, top: number): void => {
  console.log(`\n${title} (total ${(total / 1000).toFixed(0)} ms, not idle ${((total - idle) / 1000).toFixed(0)} ms)`);
  for (const [name, micros] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(micros / 1000).toFixed(1).padStart(9)} ms ${((100 * micros) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
};
if (values.callers !== undefined) {
  const pattern = new RegExp(values.callers);
  const paths = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    if (!pattern.test(nameOf(id))) continue;
    const frames: string[] = [];
    for (let at: number | undefined = id; at !== undefined && frames.length < Number(process.env.DEPTH ?? 6); at = parentOf.get(at)) frames.push(nameOf(at));
    const path = frames.join(' < ');
    paths.set(path, (paths.get(path) ?? 0) + micros);
  }
  show(`call paths of ${values.callers}`, paths, Number(values.top));
} else if (values.inclusive) {
  const inclusive = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) seen.add(nameOf(at));
    for (const name of seen) inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
  }
  show('time in a function and its callees', inclusive, Number(values.top));
} else {
  show('self time by function', byFunction, Number(values.top));
  show('self time by package or file', byPackage, 25);
}

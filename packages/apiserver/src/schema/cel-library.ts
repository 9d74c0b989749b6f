import type { Environment } from '@marcbachmann/cel-js';

// The parts of the Kubernetes CEL libraries (k8s.io/apiserver/pkg/cel/library: lists, regex, urls, and
// cel-go's string extensions) that @marcbachmann/cel-js does not have built in, so CRD rules written
// for a real cluster evaluate the same here.

type Scalar = bigint | number | string | boolean | Date;

const compare = (a: Scalar, b: Scalar): number => {
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  const x = Number(a);
  const y = Number(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

const equal = (a: unknown, b: unknown): boolean =>
  a === b || (typeof a !== 'object' && typeof b !== 'object' && (typeof a === 'bigint' || typeof b === 'bigint') && Number(a) === Number(b));

function pick(list: unknown[], better: (candidate: number) => boolean): unknown {
  if (list.length === 0) throw new Error('min/max of an empty list');
  return list.reduce((best, item) => (better(compare(item as Scalar, best as Scalar)) ? item : best));
}

function isUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol !== '' && (value.startsWith('/') || /^[a-z][a-z0-9+.-]*:/i.test(value));
  } catch {
    return false;
  }
}

export function registerKubernetesLibraries(env: Environment): Environment {
  return env
    .registerFunction('list.isSorted(): bool', (list: unknown[]) => list.every((item, i) => i === 0 || compare(list[i - 1] as Scalar, item as Scalar) <= 0))
    .registerFunction('list.sum(): dyn', (list: unknown[]) => {
      if (list.length === 0) return 0n;
      if (list.every((v) => typeof v === 'bigint')) return (list as bigint[]).reduce((a, b) => a + b, 0n);
      return list.reduce<number>((a, b) => a + Number(b), 0);
    })
    .registerFunction('list.min(): dyn', (list: unknown[]) => pick(list, (c) => c < 0))
    .registerFunction('list.max(): dyn', (list: unknown[]) => pick(list, (c) => c > 0))
    .registerFunction('list.indexOf(dyn): int', (list: unknown[], value: unknown) => BigInt(list.findIndex((item) => equal(item, value))))
    .registerFunction('list.lastIndexOf(dyn): int', (list: unknown[], value: unknown) => {
      for (let i = list.length - 1; i >= 0; i--) if (equal(list[i], value)) return BigInt(i);
      return -1n;
    })
    .registerFunction('string.find(string): string', (s: string, pattern: string) => new RegExp(pattern, 'u').exec(s)?.[0] ?? '')
    .registerFunction('string.findAll(string): list<string>', (s: string, pattern: string) => [...s.matchAll(new RegExp(pattern, 'gu'))].map((m) => m[0]))
    .registerFunction('string.findAll(string, int): list<string>', (s: string, pattern: string, limit: bigint) => {
      const all = [...s.matchAll(new RegExp(pattern, 'gu'))].map((m) => m[0]);
      return limit < 0n ? all : all.slice(0, Number(limit));
    })
    .registerFunction('string.replace(string, string): string', (s: string, from: string, to: string) => s.split(from).join(to))
    .registerFunction('string.replace(string, string, int): string', (s: string, from: string, to: string, n: bigint) => {
      if (n < 0n) return s.split(from).join(to);
      let out = s;
      let index = 0;
      for (let i = 0n; i < n; i++) {
        const at = out.indexOf(from, index);
        if (at < 0) break;
        out = out.slice(0, at) + to + out.slice(at + from.length);
        index = at + to.length;
      }
      return out;
    })
    .registerFunction('string.charAt(int): string', (s: string, i: bigint) => [...s][Number(i)] ?? '')
    .registerFunction('string.reverse(): string', (s: string) => [...s].reverse().join(''))
    .registerFunction('isURL(string): bool', (s: string) => isUrl(s));
}

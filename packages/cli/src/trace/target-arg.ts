import { KINDS, type KindName } from '@k8or/api';

/** What `k8or trace` was asked about. */
export interface TraceTarget {
  kind: KindName;
  name: string;
}

/** `KIND/NAME`, or `KIND NAME` as two words, with KIND spelt any way kubectl accepts it. */
export class TraceArgumentError extends Error {}

const GROUP_SUFFIX = /\.k8or\.io$/i;

/** The kind named by `word`: kind, singular, plural or short name, in any case, optionally with `.k8or.io`. */
export function kindOf(word: string): KindName | undefined {
  const bare = word.replace(GROUP_SUFFIX, '').toLowerCase();
  for (const info of Object.values(KINDS)) {
    const names = [info.kind.toLowerCase(), info.singular, info.plural, ...info.shortNames];
    if (names.includes(bare)) return info.kind;
  }
  return undefined;
}

export function parseTraceTarget(words: readonly string[]): TraceTarget {
  const [first, second, ...rest] = words;
  const usage = 'give KIND/NAME or KIND NAME, KIND one of bucket, table, providerconfig';
  if (first === undefined || rest.length > 0) throw new TraceArgumentError(usage);
  const slash = first.indexOf('/');
  const [kindWord, name] = slash >= 0 && second === undefined ? [first.slice(0, slash), first.slice(slash + 1)] : [first, second];
  if (!name || name.includes('/')) throw new TraceArgumentError(usage);
  const kind = kindOf(kindWord);
  if (!kind) throw new TraceArgumentError(`unknown kind "${kindWord}": ${usage}`);
  return { kind, name };
}

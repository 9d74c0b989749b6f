// A user's edits of a sharded fleet held by `bench/sharding.bench.ts --hold`: every 2 s, `--per-round`
// random Buckets and Tables of the fleet's namespace get a new `revision` label, and each is read
// until it is Ready and Synced at the generation its edit made. Prints how long that took.
//
//   node bench/fleet-edits.bench.ts --kubeconfig FILE [--per-round 10] [--seconds 40] [--buckets 80000] [--tables 20000]
//
// The fleet's kubeconfig is the one its replicas run with (the KUBECONFIG of their environment).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeRest, k8orPath } from '@k8or/core';
import { OBJECT_NAMESPACE, objectState, type FleetKind } from '../test/reliability/support/shard-fleet.ts';

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    'per-round': { type: 'string', default: '10' },
    seconds: { type: 'string', default: '40' },
    buckets: { type: 'string', default: '80000' },
    tables: { type: 'string', default: '20000' },
  },
});
function count(name: string, text: string, min: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) {
    process.stderr.write(`--${name} ${JSON.stringify(text)}: must be a whole number of at least ${min}\n`);
    process.exit(2);
  }
  return value;
}
if (values.kubeconfig === undefined) {
  process.stderr.write('--kubeconfig: the fleet\'s kubeconfig file is required\n');
  process.exit(2);
}
const PER_ROUND = count('per-round', values['per-round'], 1);
const SECONDS = count('seconds', values.seconds, 1);
const BUCKETS = count('buckets', values.buckets, 0);
const TABLES = count('tables', values.tables, 0);
if (BUCKETS + TABLES === 0) {
  process.stderr.write('--buckets, --tables: the fleet has objects of at least one kind\n');
  process.exit(2);
}

const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(readFileSync(values.kubeconfig, 'utf8'));
const rest = new KubeRest(kubeConfig, { userAgent: 'fleet-edits-bench' });
const edits: Array<{ kind: FleetKind; name: string; at: number; generation: number; readyAt?: number }> = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let editing = true;
const editor = (async () => {
  for (let round = 0; editing; round++) {
    const started = Date.now();
    await Promise.all(
      Array.from({ length: PER_ROUND }, async () => {
        const kind: FleetKind = Math.random() < TABLES / (BUCKETS + TABLES) ? 'Table' : 'Bucket';
        const name = `${kind === 'Table' ? 't' : 'b'}-${Math.floor(Math.random() * (kind === 'Table' ? TABLES : BUCKETS))}`;
        const edited = await rest.patch<{ metadata: { generation?: number } }>(k8orPath(kind, OBJECT_NAMESPACE, name), { spec: { labels: { revision: `edits-${process.pid}-${round}` } } });
        edits.push({ kind, name, at: Date.now(), generation: edited.metadata.generation ?? 0 });
      }),
    );
    await sleep(Math.max(0, 2_000 - (Date.now() - started)));
  }
})();
const watcher = (async () => {
  for (;;) {
    const pending = edits.filter((edit) => edit.readyAt === undefined);
    if (!editing && pending.length === 0) return;
    await Promise.all(
      pending.map(async (edit) => {
        const state = await objectState(rest, edit.kind, edit.name).catch(() => undefined);
        if (state?.readyAndSynced && state.observedGeneration >= edit.generation) edit.readyAt = Date.now();
      }),
    );
    await sleep(200);
  }
})();
await sleep(SECONDS * 1_000);
editing = false;
await editor;
await watcher;
rest.close();

const latencies = (kind?: FleetKind) => edits.filter((e) => kind === undefined || e.kind === kind).map((e) => (e.readyAt! - e.at) / 1000).sort((a, b) => a - b);
const at = (sorted: number[], p: number) => (sorted.length === 0 ? '-' : `${sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!.toFixed(1)} s`);
const all = latencies();
console.log(`${edits.length} edits (${PER_ROUND} every 2 s for ${SECONDS} s), edit to Ready at its generation: p50 ${at(all, 0.5)}, p95 ${at(all, 0.95)}, max ${at(all, 1)}; Buckets max ${at(latencies('Bucket'), 1)}, Tables max ${at(latencies('Table'), 1)}`);

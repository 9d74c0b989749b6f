// The embedded API server's CPU per write, by kind of write: the five writes one Bucket costs on
// its way to Ready (the user's create, then the engine's finalizer/name merge patch, its
// create-succeeded marker patch, its status PUT and its Event create), each as a phase of its own.
//
//   npm run build && node bench/apiserver-writes.bench.ts [--objects 2000] [--concurrency 32] [--rounds 3] [--watch] [--interleaved] [--cpu-prof DIR]
//
// The API server (`startSandbox`) runs in a child process, so its CPU is that process's
// `cpuUsage`; the bodies are the engine's (packages/core/src/kube/resources.ts, events/recorder.ts).
// Each round uses fresh objects. `--watch` keeps a watch on the namespace open for every phase, as
// the engine's informer does, so each write's event is encoded and sent too. The column that matters
// is "vs create": a write's server CPU over the create's in the same round, what the throughput
// bench's bound assumes is 1 for every write. `--interleaved` also sends each round's five writes
// object by object (each object's in order, `--concurrency` objects at a time), as the engine does.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startSandboxProcess } from '../test/support/sandbox-process.ts';

const PHASES = ['create', 'finalizer patch', 'marker patch', 'status update', 'Event create'] as const;
type Phase = (typeof PHASES)[number];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: '2000' },
      concurrency: { type: 'string', default: '32' },
      rounds: { type: 'string', default: '3' },
      watch: { type: 'boolean', default: false },
      interleaved: { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
    },
  });
  const objects = Number(values.objects);
  const concurrency = Number(values.concurrency);
  const rounds = Number(values.rounds);
  const execArgv = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] : [];
  const server = await startSandboxProcess({ execArgv });
  const { kubeconfig } = server;

  const { KubeConfig } = await import('@kubernetes/client-node');
  const { KubeRest, corePath, createInformer, installCrds, k8orPath } = await import('@k8or/core');
  const { API_VERSION, genericDefaultName } = await import('@k8or/api');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeconfig);
  await installCrds(kubeConfig);
  const user = new KubeRest(kubeConfig, { userAgent: 'k8or-writes-bench' });
  const engine = new KubeRest(kubeConfig, { userAgent: 'k8or-engine/writes-bench' });
  for (;;) {
    try {
      await user.get(k8orPath('Bucket', 'default'));
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const informer = values.watch ? createInformer({ kubeConfig, group: 'k8or.io', version: 'v1alpha1', plural: 'buckets', namespace: 'default' }) : undefined;
  await informer?.start();

  interface Stored {
    metadata: { name: string; namespace: string; uid: string; resourceVersion: string; generation: number };
  }
  const cpu: Record<Phase, number[]> = { create: [], 'finalizer patch': [], 'marker patch': [], 'status update': [], 'Event create': [] };
  const phase = async (round: number, label: Phase, request: (i: number) => Promise<unknown>): Promise<void> => {
    server.mark(`${label} ${round}`);
    let i = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (i < objects) await request(i++);
    }));
    const cpuMicros = await server.cpuMicros();
    cpu[label].push(cpuMicros / objects);
  };

  const time = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  /** The five writes of one resource, by kind, for object `i` of a round. */
  const writesOf = (round: number): Record<Phase, (i: number) => Promise<void>> => {
    const name = (i: number): string => `r${round}-b${i}`;
    const latest: Stored[] = [];
    const keep = (i: number) => (object: Stored): void => {
      latest[i] = object;
    };
    return {
      create: async (i) =>
        keep(i)(await user.create<Stored>(k8orPath('Bucket', 'default'), {
          apiVersion: API_VERSION,
          kind: 'Bucket',
          metadata: { name: name(i) },
          spec: { name: genericDefaultName({ clusterId: 'bench', namespace: 'default', name: name(i) }), location: 'mem-1', versioning: true },
        })),
      'finalizer patch': async (i) =>
        keep(i)(await engine.patch<Stored>(k8orPath('Bucket', 'default', name(i)), {
          metadata: { finalizers: ['k8or.io/finalizer'], annotations: { 'k8or.io/create-pending': time() }, resourceVersion: latest[i]!.metadata.resourceVersion },
        }, 'merge')),
      'marker patch': async (i) => keep(i)(await engine.patch<Stored>(k8orPath('Bucket', 'default', name(i)), { metadata: { annotations: { 'k8or.io/create-succeeded': time() } } }, 'merge')),
      'status update': async (i) => {
        const { name: n, namespace, uid, resourceVersion, generation } = latest[i]!.metadata;
        const now = time();
        keep(i)(await engine.update<Stored>(k8orPath('Bucket', namespace, n, 'status'), {
          apiVersion: API_VERSION,
          kind: 'Bucket',
          metadata: { name: n, namespace, uid, resourceVersion },
          status: {
            observedGeneration: generation,
            conditions: [
              { type: 'Ready', status: 'True', reason: 'Available', message: '', lastTransitionTime: now, observedGeneration: generation },
              { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', message: '', lastTransitionTime: now, observedGeneration: generation },
            ],
            provider: 'aws',
            atProvider: { id: `arn:mem:s3:::${n}`, url: `https://${n}.storage.mem.test`, location: 'mem-1', createdTime: now },
          },
        }));
      },
      'Event create': async (i) => {
        const { name: n, namespace, uid } = latest[i]!.metadata;
        const now = time();
        await engine.create(corePath('events', namespace), {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: `${n}.${round}${i}`, namespace },
          involvedObject: { apiVersion: API_VERSION, kind: 'Bucket', name: n, namespace, uid },
          type: 'Normal',
          reason: 'Created',
          message: `created ${n}`,
          count: 1,
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component: 'k8or-engine' },
          reportingComponent: 'k8or-engine',
          reportingInstance: 'k8or-engine',
        });
      },
    };
  };
  const interleaved: number[] = [];
  for (let round = 0; round <= rounds; round++) {
    const writes = writesOf(round);
    for (const label of PHASES) await phase(round, label, writes[label]);
    if (!values.interleaved) continue;
    // the same five writes, each object's in order and the objects side by side, as the engine sends them
    const mixed = writesOf(round + 1000);
    server.mark(`interleaved ${round}`);
    let i = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (i < objects) {
        const at = i++;
        for (const label of PHASES) await mixed[label](at);
      }
    }));
    interleaved.push((await server.cpuMicros()) / objects);
  }
  informer?.stop();
  user.close();
  engine.close();
  await server.stop();

  console.log(`\nAPI server CPU per write: ${objects} objects a phase, ${concurrency} in flight, ${values.watch ? 'a watch on the namespace open' : 'no watcher'}, rounds 1 to ${rounds} (round 0 warms up), Node ${process.version}, ${new Date().toISOString()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
  console.log(`| write | server CPU per request (µs), rounds 1 to ${rounds} | vs create (median) |`);
  console.log('|---|---:|---:|');
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  for (const label of PHASES) {
    const measured = cpu[label].slice(1);
    const ratios = measured.map((micros, r) => micros / cpu.create[r + 1]!);
    console.log(`| ${label} | ${measured.map((m) => m.toFixed(0)).join(' / ')} | ${median(ratios).toFixed(2)} |`);
  }
  const sum = (r: number): number => PHASES.reduce((total, label) => total + cpu[label][r]!, 0);
  const perResource = Array.from({ length: rounds }, (_, r) => sum(r + 1) / cpu.create[r + 1]!);
  console.log(`\nAll five writes of one resource, in creates: ${perResource.map((x) => x.toFixed(2)).join(' / ')} (the bound assumes 5.00)`);
  if (values.interleaved) {
    const inCreates = interleaved.slice(1).map((micros, r) => micros / cpu.create[r + 1]!);
    console.log(`The five interleaved (each object's in order, ${concurrency} objects at a time), in creates: ${inCreates.map((x) => x.toFixed(2)).join(' / ')}`);
  }
}

await main();

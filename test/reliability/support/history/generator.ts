// The seeded generator of histories: a list of steps by four actors (a user through the API server,
// someone else in the same cloud account through the cloud's SDK, cloud faults at the proxies, and the
// operator's process killed or its Lease taken), drawn from the seed alone, so the seed replays the
// same history. Names come from a small pool per cloud place, so the actors meet on the same names.
import type { ProxiedApi } from '../cloud-proxy.ts';
import type { Random } from '../seed.ts';
import type { CloudName, Kind } from '../stores/index.ts';

export type Annotation = 'adopt' | 'protect' | 'paused';

export type Step =
  | { actor: 'user'; op: 'apply'; object: string; cloud: CloudName; kind: Kind; externalName: string; providerConfig: string; retain: boolean; adopt: boolean; outputs: boolean }
  /** A spec edit: a bucket's versioning flips, a table's TTL attribute is set or unset. */
  | { actor: 'user'; op: 'patch'; object: string; kind: Kind; round: number }
  /** Two edits a moment apart, so a status write meets a newer generation. */
  | { actor: 'user'; op: 'patchTwice'; object: string; kind: Kind; round: number }
  | { actor: 'user'; op: 'delete'; object: string; kind: Kind }
  | { actor: 'user'; op: 'annotate'; object: string; kind: Kind; annotation: Annotation; on: boolean }
  | { actor: 'user'; op: 'move'; object: string; kind: Kind; providerConfig: string }
  /** The second ProviderConfig of a cloud retargeted (AWS region, Bigtable instance): to the other of two. */
  | { actor: 'user'; op: 'editProviderConfig'; providerConfig: string; cloud: CloudName }
  | { actor: 'other'; op: 'create'; place: string; name: string; tagged: boolean }
  | { actor: 'other'; op: 'delete' | 'recreate' | 'protect' | 'unprotect' | 'change'; place: string; name: string }
  /** The API answers its calls with throttles and 5xx before they reach the backend, for `ms`. */
  | { actor: 'faults'; op: 'before'; api: ProxiedApi; share: number; ms: number }
  /** The next `count` writes that succeed at the backend answer the operator with a 5xx. */
  | { actor: 'faults'; op: 'after'; api: ProxiedApi; count: number }
  /** The next call at the API stalls past the reconcile deadline, reaching the backend first or not. */
  | { actor: 'faults'; op: 'timeout'; api: ProxiedApi; afterEffect: boolean }
  | { actor: 'faults'; op: 'kill' }
  | { actor: 'faults'; op: 'leaseLoss' }
  /** Creates while the API throttles, someone else taking the name meanwhile (a create's outcome raced). */
  | { actor: 'race'; op: 'contendedCreate'; api: ProxiedApi; apply: Extract<Step, { op: 'apply' }>; place: string; tagged: boolean; delayMs: number }
  /** Someone else takes a name (with their mark, or none), and then the user applies an object naming it. */
  | { actor: 'race'; op: 'takenName'; place: string; tagged: boolean; apply: Extract<Step, { op: 'apply' }> }
  /** Two objects naming one resource applied together (two manifests, or an import's output next to what is managed). */
  | { actor: 'race'; op: 'twinApply'; first: Extract<Step, { op: 'apply' }>; second: Extract<Step, { op: 'apply' }> }
  /** Quiet time: the operator reconciles, resyncs and repairs drift. */
  | { actor: 'wait'; op: 'wait'; ms: number };

/** A place of cloud resources: one kind in one cloud (Bigtable per instance). */
export interface Place {
  cloud: CloudName;
  kind: Kind;
  place: string;
  api: ProxiedApi;
  taggable: boolean;
  protectable: boolean;
}

export interface HistoryShape {
  /** Steps per cloud (the steps of the clouds are interleaved). */
  stepsPerCloud: number;
  /** External names per place: few, so actors meet on them. */
  namesPerPlace: number;
  /** Operator kills and Lease losses in the whole history (each kill costs a Lease expiry). */
  kills: number;
  leaseLosses: number;
  /** The ProviderConfigs by `cloud/kind`: [the one most objects start on, the other one]. */
  providerConfigs: Readonly<Record<string, readonly [string, string]>>;
  /** The ProviderConfig a user retargets, per cloud (none: nothing to retarget there). */
  retargeted: Partial<Record<CloudName, string>>;
  /** Places someone else acts on (Bigtable: its first instance only). */
  places: readonly Place[];
}

/** A name valid for every kind of every cloud: lowercase letters and digits, starting with a letter. */
export function poolName(runTag: string, place: Place, index: number): string {
  const kind = place.kind === 'Bucket' ? 'b' : 't';
  return `h${runTag}${place.cloud.slice(0, 2)}${kind}${index}`;
}

interface LiveObject {
  object: string;
  cloud: CloudName;
  kind: Kind;
  externalName: string;
}

export function generateHistory(random: Random, runTag: string, shape: HistoryShape): Step[] {
  const steps: Step[] = [];
  const live: LiveObject[] = [];
  let objects = 0;
  let round = 0;
  const clouds = [...new Set(shape.places.map((p) => p.cloud))];
  const total = shape.stepsPerCloud * clouds.length;
  // kills and lease losses at seeded points spread over the history
  const killAt = new Set(Array.from({ length: shape.kills }, () => random.int(Math.floor(total / 5), total - 1)));
  const leaseAt = new Set(Array.from({ length: shape.leaseLosses }, () => random.int(Math.floor(total / 5), total - 1)));

  const pcsOf = (of: { cloud: CloudName; kind: Kind }): readonly [string, string] => {
    const pcs = shape.providerConfigs[`${of.cloud}/${of.kind}`];
    if (!pcs) throw new Error(`no ProviderConfigs for ${of.cloud}/${of.kind}`);
    return pcs;
  };
  const nameIn = (place: Place): string => poolName(runTag, place, random.int(0, shape.namesPerPlace - 1));
  let fresh = 0;
  /** An object to apply: naming a name of the pool, or (`freshName`) one nobody holds yet. */
  const newApply = (place: Place, freshName = false): Extract<Step, { op: 'apply' }> => {
    const object = `${place.kind === 'Bucket' ? 'bucket' : 'table'}-${place.cloud}-${objects++}`;
    const step: Extract<Step, { op: 'apply' }> = {
      actor: 'user',
      op: 'apply',
      object,
      cloud: place.cloud,
      kind: place.kind,
      externalName: freshName ? poolName(runTag, place, shape.namesPerPlace + fresh++) : nameIn(place),
      // mostly the cloud's first ProviderConfig; Azure's SAS one now and then from the start
      providerConfig: pcsOf(place)[random.chance(place.cloud === 'azure' ? 0.3 : 0.1) ? 1 : 0],
      retain: random.chance(0.2),
      adopt: random.chance(0.15),
      outputs: random.chance(0.4),
    };
    live.push({ object, cloud: place.cloud, kind: place.kind, externalName: step.externalName });
    return step;
  };

  for (let i = 0; i < total; i++) {
    if (killAt.has(i)) steps.push({ actor: 'faults', op: 'kill' });
    if (leaseAt.has(i)) steps.push({ actor: 'faults', op: 'leaseLoss' });
    const cloud = clouds[i % clouds.length]!;
    const places = shape.places.filter((p) => p.cloud === cloud);
    const place = random.pick(places);
    const mine = live.filter((o) => o.cloud === cloud);
    const draw = random.next();
    if (draw < 0.18 || mine.length === 0) {
      steps.push(newApply(place));
    } else if (draw < 0.22) {
      const first = newApply(place);
      const second = { ...newApply(place), externalName: first.externalName, providerConfig: first.providerConfig };
      live.at(-1)!.externalName = first.externalName;
      steps.push({ actor: 'race', op: 'twinApply', first, second });
    } else if (draw < 0.25) {
      steps.push({ actor: 'race', op: 'takenName', place: place.place, tagged: place.taggable && random.chance(0.5), apply: newApply(place, true) });
    } else if (draw < 0.35) {
      steps.push({ actor: 'race', op: 'contendedCreate', api: place.api, apply: newApply(place, true), place: place.place, tagged: place.taggable && random.chance(0.5), delayMs: random.int(200, 1500) });
    } else if (draw < 0.55) {
      // mostly a name an object of the user's names now: someone else meets k8or's resources
      const named = live.filter((o) => o.cloud === place.cloud && o.kind === place.kind);
      const name = named.length > 0 && random.chance(0.7) ? random.pick(named).externalName : nameIn(place);
      const op = random.pick(['create', 'create', 'recreate', 'delete', 'change', ...(place.protectable ? (['protect', 'protect', 'unprotect'] as const) : [])] as const);
      steps.push(op === 'create' ? { actor: 'other', op, place: place.place, name, tagged: place.taggable && random.chance(0.5) } : { actor: 'other', op, place: place.place, name });
    } else if (draw < 0.66) {
      const target = random.pick(mine);
      steps.push({ actor: 'user', op: random.chance(0.3) ? 'patchTwice' : 'patch', object: target.object, kind: target.kind, round: ++round });
    } else if (draw < 0.73) {
      const target = random.pick(mine);
      steps.push({ actor: 'user', op: 'delete', object: target.object, kind: target.kind });
      live.splice(live.indexOf(target), 1);
    } else if (draw < 0.79) {
      const target = random.pick(mine);
      steps.push({ actor: 'user', op: 'annotate', object: target.object, kind: target.kind, annotation: random.pick(['adopt', 'adopt', 'protect', 'paused'] as const), on: random.chance(0.6) });
    } else if (draw < 0.85) {
      const target = random.pick(mine);
      steps.push({ actor: 'user', op: 'move', object: target.object, kind: target.kind, providerConfig: random.pick(pcsOf(target)) });
    } else if (draw < 0.88 && shape.retargeted[cloud]) {
      steps.push({ actor: 'user', op: 'editProviderConfig', providerConfig: shape.retargeted[cloud], cloud });
    } else if (draw < 0.97) {
      const kind = random.int(0, 2);
      if (kind === 0) steps.push({ actor: 'faults', op: 'before', api: place.api, share: random.pick([0.3, 0.6, 0.9]), ms: random.int(1_000, 5_000) });
      else if (kind === 1) steps.push({ actor: 'faults', op: 'after', api: place.api, count: random.int(1, 2) });
      else steps.push({ actor: 'faults', op: 'timeout', api: place.api, afterEffect: random.chance(0.5) });
    } else {
      steps.push({ actor: 'wait', op: 'wait', ms: random.int(2_000, 6_000) });
    }
    steps.push({ actor: 'wait', op: 'wait', ms: random.int(100, 1_200) });
  }
  return steps;
}

/** One line per step, for the printed history and failure reports. */
export function describeStep(step: Step): string {
  const { actor, op, ...rest } = step;
  return `${actor} ${op} ${JSON.stringify(rest)}`;
}

// Seeded invalid Buckets, Tables and ProviderConfigs, each with one defect and the field a refusal must
// name: wrong types, values out of range or outside an enum, names the cloud or Kubernetes refuses,
// unknown fields, bad annotations, huge values; and immutable changes to objects that exist.
import type { Random } from './seed.ts';

export type Defect = 'wrong-type' | 'out-of-range' | 'bad-name' | 'unknown-field' | 'bad-annotation' | 'huge-value' | 'immutable-change';

export interface InvalidManifest {
  manifest: Record<string, unknown>;
  /** The field the refusal must name, as the API server or the webhook writes it. */
  field: string;
  defect: Defect;
}

type Spec = Record<string, unknown>;
type Mutation = { field: string; defect: Defect; apply: (object: Manifest) => void };
interface Manifest extends Record<string, unknown> {
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec: Spec;
}

/** The ProviderConfig the generated Buckets and Tables use (installed by the suite, valid). */
export const PROVIDER_CONFIG = 'default';

const setIn = (object: Record<string, unknown>, path: string[], value: unknown): void => {
  let at = object;
  for (const key of path.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
  at[path.at(-1)!] = value;
};

const validBucket = (name: string, namespace: string): Manifest => ({
  apiVersion: 'k8or.io/v1alpha1',
  kind: 'Bucket',
  metadata: { name, namespace },
  spec: { providerConfigRef: { name: PROVIDER_CONFIG }, versioning: true, labels: { team: 'media' }, lifecycle: [{ id: 'expire', expirationDays: 30 }] },
});

const validTable = (name: string, namespace: string): Manifest => ({
  apiVersion: 'k8or.io/v1alpha1',
  kind: 'Table',
  metadata: { name, namespace },
  spec: { providerConfigRef: { name: PROVIDER_CONFIG }, partitionKey: { name: 'id', type: 'string' }, billing: { mode: 'provisioned', readCapacity: 5, writeCapacity: 5 } },
});

const validProviderConfig = (name: string): Manifest => ({
  apiVersion: 'k8or.io/v1alpha1',
  kind: 'ProviderConfig',
  metadata: { name },
  spec: { provider: 'aws', region: 'us-east-1', endpoint: 'http://127.0.0.1:9', credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'aws-credentials' } } },
});

const set = (field: string, defect: Defect, value: unknown, reported = field): Mutation => ({
  field: reported,
  defect,
  apply: (object) => setIn(object, field.split('.'), value),
});

const annotate = (key: string, value: string): Mutation => ({
  field: `metadata.annotations[${key}]`,
  defect: 'bad-annotation',
  apply: (object) => {
    object.metadata.annotations = { ...object.metadata.annotations, [key]: value };
  },
});

function bucketMutations(random: Random): Mutation[] {
  const long = (n: number): string => 'x'.repeat(n);
  return [
    set('spec.versioning', 'wrong-type', random.pick(['yes', 1, ['true']])),
    set('spec.publicAccess', 'wrong-type', random.pick([true, 0])),
    set('spec.labels', 'wrong-type', 'team=media'),
    set('spec.lifecycle', 'wrong-type', { id: 'expire', expirationDays: 30 }),
    set('spec.forceDelete', 'wrong-type', 'true'),
    set('spec.providerConfigRef', 'wrong-type', PROVIDER_CONFIG),
    set('spec.publicAccess', 'out-of-range', random.pick(['Open', 'public', 'BLOCKED'])),
    set('spec.deletionPolicy', 'out-of-range', random.pick(['Destroy', 'Orphan', 'delete'])),
    set('spec.managementPolicy', 'out-of-range', random.pick(['Sometimes', 'ReadOnly'])),
    set('spec.lifecycle', 'out-of-range', [{ id: 'expire', expirationDays: random.pick([0, -1, 36501, 2 ** 31]) }], 'spec.lifecycle[0].expirationDays'),
    set('spec.lifecycle', 'out-of-range', [{ id: 'cold', transitions: [{ days: 30, tier: random.pick(['Cold', 'Glacier', 'archive']) }] }], 'spec.lifecycle[0].transitions[0].tier'),
    set('spec.lifecycle', 'out-of-range', [{ id: 'nothing' }], 'spec.lifecycle[0]'),
    set('spec.encryption', 'out-of-range', { type: random.pick(['Homemade', 'None']) }, 'spec.encryption.type'),
    set('spec.encryption', 'out-of-range', { type: 'CustomerManaged' }, 'spec.encryption'),
    set('spec.name', 'bad-name', random.pick(['Upper_Case', 'ab', long(64), '192.168.10.20', 'xn--bucket', 'my..bucket', 'bucket-', 'sthree-bucket', 'bucket--x-s3']), 'spec.name'),
    set('spec.location', 'bad-name', random.pick(['us east 1', 'eu_west_1', long(65)])),
    set('spec.labels', 'bad-name', { [random.pick(['Team', '1team', 'k8or-owner', 'te am'])]: 'media' }),
    set('spec.versionning', 'unknown-field', true),
    set('spec.lifeCycle', 'unknown-field', []),
    set('spec.labelz', 'unknown-field', { team: 'media' }),
    set('spec.encryption', 'unknown-field', { type: 'ProviderManaged', keyid: 'k' }, 'spec.encryption.keyid'),
    annotate('k8or.io/deletion-policy', random.pick(['Sometimes', 'delete', ''])),
    annotate('k8or.io/resync-period', random.pick(['soon', '1ms', '-5m', '10 minutes'])),
    {
      field: 'metadata.annotations[k8or.io/external-name]',
      defect: 'bad-annotation',
      apply: (object) => {
        object.spec['name'] = `named-${random.int(100, 999)}-bucket`;
        object.metadata.annotations = { 'k8or.io/external-name': `other-${random.int(100, 999)}-bucket` };
      },
    },
    set('spec.labels', 'huge-value', Object.fromEntries(Array.from({ length: 41 + random.int(0, 200) }, (_, i) => [`label${i}`, 'v']))),
    set('spec.labels', 'huge-value', { team: long(random.int(64, 20_000)) }),
    set('spec.name', 'huge-value', long(random.int(256, 20_000))),
    set('spec.lifecycle', 'huge-value', Array.from({ length: 101 + random.int(0, 100) }, (_, i) => ({ id: `rule-${i}`, expirationDays: 30 }))),
    set('spec.lifecycle', 'huge-value', [{ id: long(random.int(256, 5_000)), expirationDays: 30 }], 'spec.lifecycle[0].id'),
    set('spec.lifecycle', 'huge-value', [{ id: 'prefixed', prefix: long(random.int(1_025, 20_000)), expirationDays: 30 }], 'spec.lifecycle[0].prefix'),
  ];
}

function tableMutations(random: Random): Mutation[] {
  return [
    set('spec.partitionKey', 'wrong-type', 'id'),
    set('spec.pointInTimeRecovery', 'wrong-type', random.pick(['on', 1])),
    set('spec.billing', 'wrong-type', 'onDemand'),
    set('spec.ttlAttribute', 'wrong-type', random.pick([42, true])),
    set('spec.partitionKey.type', 'out-of-range', random.pick(['date', 'String', 'uuid', 'int'])),
    set('spec.billing.mode', 'out-of-range', random.pick(['free', 'OnDemand', 'reserved'])),
    set('spec.billing.readCapacity', 'out-of-range', random.pick([0, -3, 40_001, 1e9])),
    set('spec.billing', 'out-of-range', { mode: 'onDemand', readCapacity: 5, writeCapacity: 5 }, 'spec.billing'),
    set('spec.partitionKey', 'out-of-range', { name: 'id' }, 'spec.partitionKey.type'),
    set('spec.name', 'bad-name', random.pick(['has space', 'a', 'x'.repeat(256), 'tab\tle', 'émoji-table', 'semi;colon'])),
    set('spec.partitionKey.name', 'bad-name', ''),
    set('spec.partitionkey', 'unknown-field', { name: 'id', type: 'string' }),
    set('spec.billing.readcapacity', 'unknown-field', 5),
    set('spec.sortKey', 'unknown-field', { name: 'at', type: 'number', order: 'asc' }, 'spec.sortKey.order'),
    annotate('k8or.io/deletion-policy', random.pick(['Keep', 'Orphan'])),
    annotate('k8or.io/resync-period', random.pick(['never', '0s', '2'])),
    set('spec.labels', 'huge-value', Object.fromEntries(Array.from({ length: 41 + random.int(0, 100) }, (_, i) => [`label${i}`, 'v']))),
    set('spec.ttlAttribute', 'huge-value', 'x'.repeat(random.int(256, 20_000))),
    set('spec.partitionKey.name', 'huge-value', 'x'.repeat(random.int(256, 20_000))),
  ];
}

function providerConfigMutations(random: Random): Mutation[] {
  return [
    set('spec.region', 'wrong-type', random.pick([42, ['us-east-1']])),
    set('spec.credentials', 'wrong-type', 'Secret'),
    set('spec.provider', 'out-of-range', random.pick(['AWS', 'no such', '-aws'])),
    set('spec.credentials.source', 'out-of-range', random.pick(['Magic', 'File', 'secret'])),
    set('spec.region', 'bad-name', random.pick(['US East 1', 'us_east_1', 'x'.repeat(65)])),
    set('spec.endpoint', 'bad-name', random.pick(['not a url', 'ftp://example.com', '127.0.0.1:9000'])),
    set('spec.credentials.secretRef.name', 'bad-name', random.pick(['Bad_Name', '-lead', 'trail-'])),
    set('spec.regoin', 'unknown-field', 'us-east-1'),
    set('spec.credentials.secretref', 'unknown-field', { namespace: 'k8or-system', name: 'aws-credentials' }),
    set('spec.endpoint', 'huge-value', `http://${'x'.repeat(random.int(2_049, 20_000))}`),
  ];
}

/** `count` invalid manifests (no immutable changes: those need an object to change), names `bad-<n>`. */
export function invalidManifests(random: Random, count: number, namespace: string, firstIndex = 0): InvalidManifest[] {
  const bucket = bucketMutations(random);
  const table = tableMutations(random);
  const providerConfig = providerConfigMutations(random);
  const out: InvalidManifest[] = [];
  for (let i = firstIndex; i < firstIndex + count; i++) {
    const name = `bad-${i}`;
    const roll = random.next();
    // a refused metadata.name: the API server's own rule, whatever the kind
    if (roll < 0.04) {
      const badName = random.pick([`Bad_Name-${i}`, `-lead-${i}`, `trail-${i}-`, `x${i}${'x'.repeat(253)}`, `sp ace-${i}`]);
      out.push({ manifest: validBucket(badName, namespace), field: 'metadata.name', defect: 'bad-name' });
      continue;
    }
    const [object, mutations] = roll < 0.5 ? [validBucket(name, namespace), bucket] : roll < 0.85 ? [validTable(name, namespace), table] : [validProviderConfig(name), providerConfig];
    // regenerate the random values of each mutation now and then, so a run covers many of them
    const mutation = random.pick(mutations);
    mutation.apply(object);
    out.push({ manifest: object, field: mutation.field, defect: mutation.defect });
    if (random.chance(0.05)) mutations.splice(0, mutations.length, ...(mutations === bucket ? bucketMutations(random) : mutations === table ? tableMutations(random) : providerConfigMutations(random)));
  }
  return out;
}

/** A valid object to create, and `count` changes of its immutable fields, each refused. */
export function immutableChanges(random: Random, count: number, namespace: string): { originals: Record<string, unknown>[]; changes: InvalidManifest[] } {
  const originals: Manifest[] = [];
  const changes: InvalidManifest[] = [];
  for (let i = 0; i < count; i++) {
    const name = `fixed-${i}`;
    if (random.chance(0.5)) {
      const original = validBucket(name, namespace);
      original.spec['name'] = `k8or-faults-fixed-${i}-${random.int(1000, 9999)}`;
      original.spec['location'] = 'us-east-1';
      originals.push(original);
      const changed = structuredClone(original);
      const field = random.pick(['spec.name', 'spec.location']);
      changed.spec[field.slice('spec.'.length)] = field === 'spec.name' ? `${String(original.spec['name'])}-renamed` : 'eu-west-1';
      changes.push({ manifest: changed, field, defect: 'immutable-change' });
    } else {
      const original = validTable(name, namespace);
      original.spec['name'] = `k8or-faults-fixed-${i}`;
      originals.push(original);
      const changed = structuredClone(original);
      const field = random.pick(['spec.name', 'spec.partitionKey']);
      if (field === 'spec.name') changed.spec['name'] = `k8or-faults-fixed-${i}-renamed`;
      else changed.spec['partitionKey'] = { name: 'id', type: random.pick(['number', 'binary']) };
      changes.push({ manifest: changed, field, defect: 'immutable-change' });
    }
  }
  return { originals, changes };
}

/** The provider config the generated objects use, valid, for `k8or validate`'s context. */
export const validDefaultProviderConfig = (): Record<string, unknown> => validProviderConfig(PROVIDER_CONFIG);

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { allCrds, crdFileName, crdYaml, type JSONSchemaProps } from '@k8or/api';

const crdDir = fileURLToPath(new URL('../../../charts/k8or/crds/', import.meta.url));

/** Every property path in a schema whose node has no description. */
function undescribed(schema: JSONSchemaProps, path: string): string[] {
  const missing = schema.description ? [] : [path];
  for (const [name, child] of Object.entries(schema.properties ?? {})) missing.push(...undescribed(child, `${path}.${name}`));
  if (schema.items) missing.push(...undescribed(schema.items, `${path}[]`));
  if (typeof schema.additionalProperties === 'object') missing.push(...undescribed(schema.additionalProperties, `${path}{}`));
  return missing;
}

/** Every CEL rule in a schema, keyed by the property path it sits on. */
function rules(schema: JSONSchemaProps, path = ''): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const own = schema['x-kubernetes-validations']?.map((r) => r.rule);
  if (own) found.set(path, own);
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    for (const [p, r] of rules(child, path ? `${path}.${name}` : name)) found.set(p, r);
  }
  return found;
}

describe('generated CRDs', () => {
  const crds = allCrds();

  it('match the YAML committed in charts/k8or/crds (run `npm run generate` after changing packages/api)', () => {
    const committed = readdirSync(crdDir).filter((f) => f.endsWith('.yaml')).sort();
    assert.deepEqual(committed, crds.map(crdFileName).sort());
    for (const crd of crds) {
      assert.equal(readFileSync(`${crdDir}${crdFileName(crd)}`, 'utf8'), crdYaml(crd), `${crdFileName(crd)} is stale`);
    }
  });

  for (const crd of crds) {
    describe(crd.metadata.name, () => {
      const version = crd.spec.versions[0]!;
      const schema = version.schema.openAPIV3Schema;

      it('describes every field, so kubectl explain is useful', () => {
        assert.deepEqual(undescribed(schema, crd.spec.names.kind), []);
      });

      it('has the status subresource, a short name and the k8or category', () => {
        assert.deepEqual(version.subresources, { status: {} });
        assert.ok(crd.spec.names.shortNames.length > 0);
        assert.deepEqual(crd.spec.names.categories, ['k8or']);
      });

      it('is structural: every node has a type, except metadata which the server owns', () => {
        const untyped: string[] = [];
        const walk = (s: JSONSchemaProps, p: string): void => {
          if (!s.type && !s['x-kubernetes-preserve-unknown-fields']) untyped.push(p);
          for (const [n, c] of Object.entries(s.properties ?? {})) walk(c, `${p}.${n}`);
          if (s.items) walk(s.items, `${p}[]`);
          if (typeof s.additionalProperties === 'object') walk(s.additionalProperties, `${p}{}`);
        };
        walk(schema, '');
        assert.deepEqual(untyped, []);
      });
    });
  }

  it('prints provider, external name, Ready, Synced, the drift count and age for Buckets and Tables', () => {
    for (const crd of crds.filter((c) => c.spec.names.kind !== 'ProviderConfig')) {
      const columns = crd.spec.versions[0]!.additionalPrinterColumns.filter((c) => !c.priority);
      assert.deepEqual(
        columns.map((c) => c.name),
        ['PROVIDER', 'EXTERNAL-NAME', 'READY', 'SYNCED', 'DRIFT', 'AGE'],
      );
      assert.deepEqual(columns.find((c) => c.name === 'DRIFT'), { name: 'DRIFT', type: 'integer', jsonPath: '.status.driftCount', description: 'How many settings differ between the cloud and the spec.' });
    }
  });

  it('describes spec.driftPolicy for kubectl explain: modes, per-field paths, approval', () => {
    for (const crd of crds.filter((c) => c.spec.names.kind !== 'ProviderConfig')) {
      const policy = crd.spec.versions[0]!.schema.openAPIV3Schema.properties?.['spec']?.properties?.['driftPolicy'];
      assert.ok(policy, `${crd.spec.names.kind} has spec.driftPolicy`);
      assert.match(policy.description ?? '', /Repair.*Report.*Hold.*k8or\.io\/approve-drift/s);
      assert.deepEqual(policy.properties?.['default']?.enum, ['Repair', 'Report', 'Hold']);
      assert.deepEqual(policy.properties?.['fields']?.items?.required, ['path', 'mode']);
    }
  });

  it('makes external name, location and table keys immutable with CEL transition rules', () => {
    const [bucket, table] = ['buckets.k8or.io', 'tables.k8or.io'].map((n) => rules(crds.find((c) => c.metadata.name === n)!.spec.versions[0]!.schema.openAPIV3Schema));
    assert.deepEqual(bucket!.get('spec.name'), ['self == oldSelf']);
    assert.deepEqual(bucket!.get('spec.location'), ['self == oldSelf']);
    assert.ok(bucket!.get('spec')!.includes('!has(oldSelf.name) || has(self.name)'));
    assert.deepEqual(table!.get('spec.name'), ['self == oldSelf']);
    assert.deepEqual(table!.get('spec.partitionKey'), ['self == oldSelf']);
    assert.deepEqual(table!.get('spec.sortKey'), ['self == oldSelf']);
    assert.ok(table!.get('spec')!.includes('has(self.sortKey) == has(oldSelf.sortKey)'));
  });
});

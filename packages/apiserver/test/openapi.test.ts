import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { allCrds } from '@k8or/api';
import { openApiV2, openApiV2Protobuf, openApiV3GroupVersion, openApiV3Root, type ServedResource } from '@k8or/apiserver';

// The OpenAPI documents are what kubectl reads for `explain`, for the choice of patch type and for
// server-side field validation support. These tests check the documents the way kubectl reads them.

const crdResources: ServedResource[] = allCrds().map((crd) => ({
  group: crd.spec.group,
  version: crd.spec.versions[0]!.name,
  kind: crd.spec.names.kind,
  plural: crd.spec.names.plural,
  namespaced: crd.spec.scope === 'Namespaced',
  schema: crd.spec.versions[0]!.schema.openAPIV3Schema,
  builtin: false,
}));
const builtin = (group: string, version: string, kind: string, plural: string, namespaced: boolean): ServedResource => ({
  group,
  version,
  kind,
  plural,
  namespaced,
  builtin: true,
});
const resources: ServedResource[] = [
  builtin('', 'v1', 'Namespace', 'namespaces', false),
  builtin('', 'v1', 'ConfigMap', 'configmaps', true),
  builtin('', 'v1', 'Secret', 'secrets', true),
  builtin('', 'v1', 'Event', 'events', true),
  builtin('events.k8s.io', 'v1', 'Event', 'events', true),
  builtin('coordination.k8s.io', 'v1', 'Lease', 'leases', true),
  builtin('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false),
  builtin('admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false),
  builtin('admissionregistration.k8s.io', 'v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false),
  ...crdResources,
];

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => {
  assert.ok(typeof v === 'object' && v !== null && !Array.isArray(v), `expected an object, got ${JSON.stringify(v)}`);
  return v as Json;
};

/** The PATCH operation for a kind, found the way kubectl's QueryParamVerifierV3 looks for it. */
function patchOperationFor(doc: Json, kind: string): Json {
  for (const item of Object.values(obj(doc.paths))) {
    const patch = obj(item).patch;
    if (patch && obj(obj(patch)['x-kubernetes-group-version-kind']).kind === kind) return obj(patch);
  }
  assert.fail(`no PATCH operation for ${kind}`);
}

describe('OpenAPI v3', () => {
  it('lists every served group version with a content hash', () => {
    const root = obj(openApiV3Root(resources));
    const paths = obj(root.paths);
    assert.deepEqual(Object.keys(paths), [
      'api/v1',
      'apis/admissionregistration.k8s.io/v1',
      'apis/apiextensions.k8s.io/v1',
      'apis/coordination.k8s.io/v1',
      'apis/events.k8s.io/v1',
      'apis/k8or.io/v1alpha1',
    ]);
    assert.match(String(obj(paths['apis/k8or.io/v1alpha1']).serverRelativeURL), /^\/openapi\/v3\/apis\/k8or\.io\/v1alpha1\?hash=[0-9A-F]{128}$/);
  });

  it('changes the hash when a group version changes, so client caches refresh', () => {
    const before = obj(obj(openApiV3Root(resources)).paths)['apis/k8or.io/v1alpha1'];
    const after = obj(obj(openApiV3Root(resources.filter((r) => r.kind !== 'Table'))).paths)['apis/k8or.io/v1alpha1'];
    assert.notDeepEqual(before, after);
    const again = obj(obj(openApiV3Root(resources)).paths)['apis/k8or.io/v1alpha1'];
    assert.deepEqual(before, again);
  });

  it('publishes the Bucket schema with its group-version-kind and ObjectMeta', () => {
    const doc = obj(openApiV3GroupVersion('k8or.io', 'v1alpha1', resources));
    const schemas = obj(obj(doc.components).schemas);
    const bucketSchema = obj(schemas['io.k8or.v1alpha1.Bucket']);
    assert.deepEqual(bucketSchema['x-kubernetes-group-version-kind'], [{ group: 'k8or.io', kind: 'Bucket', version: 'v1alpha1' }]);
    const props = obj(bucketSchema.properties);
    assert.deepEqual(obj(props.metadata).allOf, [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
    const versioning = obj(obj(obj(props.spec).properties).versioning);
    assert.equal(versioning.type, 'boolean');
    assert.match(String(versioning.description), /Keep every version/);
    assert.ok(schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'], 'ObjectMeta is in the same document');
    assert.ok(schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry'], 'and what it references');
    assert.deepEqual(obj(schemas['io.k8or.v1alpha1.BucketList'])['x-kubernetes-group-version-kind'], [{ group: 'k8or.io', kind: 'BucketList', version: 'v1alpha1' }]);
  });

  it('announces fieldValidation and dryRun on PATCH, and no strategic merge for custom resources', () => {
    const doc = obj(openApiV3GroupVersion('k8or.io', 'v1alpha1', resources));
    const patch = patchOperationFor(doc, 'Bucket');
    const params = (patch.parameters as Json[]).map((p) => `${String(p.in)}:${String(p.name)}`);
    assert.ok(params.includes('query:fieldValidation'));
    assert.ok(params.includes('query:dryRun'));
    assert.ok(params.includes('query:fieldManager'));
    assert.deepEqual(Object.keys(obj(obj(patch.requestBody).content)), [
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/apply-patch+yaml',
    ]);
    const paths = Object.keys(obj(doc.paths));
    assert.ok(paths.includes('/apis/k8or.io/v1alpha1/namespaces/{namespace}/buckets/{name}/status'));
    assert.ok(paths.includes('/apis/k8or.io/v1alpha1/buckets'), 'list across namespaces');
    assert.ok(paths.includes('/apis/k8or.io/v1alpha1/providerconfigs/{name}'), 'cluster-scoped path');
  });

  it('offers strategic merge patch for built-in kinds, with the merge keys of the Go types', () => {
    const core = obj(openApiV3GroupVersion('', 'v1', resources));
    const patch = patchOperationFor(core, 'ConfigMap');
    assert.ok(Object.keys(obj(obj(patch.requestBody).content)).includes('application/strategic-merge-patch+json'));
    const admission = obj(openApiV3GroupVersion('admissionregistration.k8s.io', 'v1', resources));
    const vwc = obj(obj(obj(admission.components).schemas)['io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration']);
    const webhooks = obj(obj(vwc.properties).webhooks);
    assert.equal(webhooks['x-kubernetes-patch-merge-key'], 'name');
    assert.deepEqual(vwc['x-kubernetes-group-version-kind'], [{ group: 'admissionregistration.k8s.io', kind: 'ValidatingWebhookConfiguration', version: 'v1' }]);
  });

  it('still describes a built-in kind it has no schema for, as an open object', () => {
    const doc = obj(openApiV3GroupVersion('apps', 'v1', [builtin('apps', 'v1', 'Deployment', 'deployments', true)]));
    const deployment = obj(obj(obj(doc.components).schemas)['io.k8s.api.apps.v1.Deployment']);
    assert.equal(deployment['x-kubernetes-preserve-unknown-fields'], true);
    assert.deepEqual(deployment['x-kubernetes-group-version-kind'], [{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
  });

  it('has no document for a group version nobody serves', () => {
    assert.equal(openApiV3GroupVersion('example.com', 'v1', resources), undefined);
  });

  it('keeps every $ref resolvable inside its document', () => {
    for (const key of Object.keys(obj(obj(openApiV3Root(resources)).paths))) {
      const [, group, version] = key.startsWith('api/') ? ['', '', key.slice(4)] : key.split('/');
      const doc = obj(openApiV3GroupVersion(group!, version!, resources));
      const schemas = obj(obj(doc.components).schemas);
      const refs = JSON.stringify(doc).match(/"\$ref":"#\/components\/schemas\/[^"]+"/g) ?? [];
      for (const r of refs) {
        const name = r.slice('"$ref":"#/components/schemas/'.length, -1);
        assert.ok(schemas[name], `${key}: ${name} is defined`);
      }
    }
  });
});

/** A minimal protobuf wire-format reader, enough to walk gnostic messages. */
function fields(bytes: Uint8Array): Map<number, Uint8Array[]> {
  const out = new Map<number, Uint8Array[]>();
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = bytes[pos++]!;
      result += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return result;
      shift += 7;
    }
  };
  while (pos < bytes.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    let value: Uint8Array;
    if (wire === 0) {
      const start = pos;
      varint();
      value = bytes.subarray(start, pos);
    } else if (wire === 1) {
      value = bytes.subarray(pos, pos + 8);
      pos += 8;
    } else if (wire === 2) {
      const length = varint();
      value = bytes.subarray(pos, pos + length);
      pos += length;
    } else {
      assert.fail(`unexpected wire type ${wire}`);
    }
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  assert.equal(pos, bytes.length, 'message ends exactly at its length');
  return out;
}
const text = (b: Uint8Array | undefined): string => Buffer.from(b ?? []).toString('utf8');

describe('OpenAPI v2', () => {
  it('has definitions and PATCH paths announcing fieldValidation (for kubectl 1.27)', () => {
    const doc = obj(openApiV2(resources));
    assert.equal(doc.swagger, '2.0');
    const definitions = obj(doc.definitions);
    assert.deepEqual(obj(definitions['io.k8or.v1alpha1.Bucket'])['x-kubernetes-group-version-kind'], [{ group: 'k8or.io', kind: 'Bucket', version: 'v1alpha1' }]);
    assert.deepEqual(obj(obj(obj(definitions['io.k8or.v1alpha1.Bucket']).properties).metadata), {
      description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    });
    const item = obj(obj(doc.paths)['/apis/k8or.io/v1alpha1/namespaces/{namespace}/buckets/{name}']);
    const patch = obj(item.patch);
    assert.deepEqual(patch.consumes, ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
    assert.ok((patch.parameters as Json[]).some((p) => p.name === 'fieldValidation' && p.in === 'query' && p.type === 'string'));
    assert.ok((patch.parameters as Json[]).some((p) => p.in === 'body'));
  });

  it('encodes as the gnostic openapi_v2.Document protobuf client-go decodes', () => {
    const bytes = openApiV2Protobuf(resources);
    const document = fields(bytes);
    assert.equal(text(document.get(1)?.[0]), '2.0', 'swagger');
    assert.equal(text(fields(document.get(2)![0]!).get(1)?.[0]), 'Kubernetes', 'info.title');

    const definitions = fields(document.get(9)![0]!).get(1)!.map((named) => fields(named));
    const names = definitions.map((d) => text(d.get(1)?.[0]));
    assert.ok(names.includes('io.k8or.v1alpha1.Bucket'));
    assert.ok(names.includes('io.k8s.api.core.v1.ConfigMap'));
    const bucket = fields(definitions[names.indexOf('io.k8or.v1alpha1.Bucket')]!.get(2)![0]!);
    const extensions = (bucket.get(31) ?? []).map((e) => fields(e));
    const gvk = extensions.find((e) => text(e.get(1)?.[0]) === 'x-kubernetes-group-version-kind');
    assert.ok(gvk, 'GVK vendor extension');
    assert.deepEqual(JSON.parse(text(fields(gvk.get(2)![0]!).get(2)?.[0])), [{ group: 'k8or.io', kind: 'Bucket', version: 'v1alpha1' }]);

    const paths = fields(document.get(8)![0]!).get(2)!.map((named) => fields(named));
    const bucketItem = paths.find((p) => text(p.get(1)?.[0]) === '/apis/k8or.io/v1alpha1/namespaces/{namespace}/buckets/{name}');
    assert.ok(bucketItem);
    const patch = fields(fields(bucketItem.get(2)![0]!).get(8)![0]!);
    const queryNames = (patch.get(8) ?? [])
      .map((item) => fields(fields(item).get(1)![0]!))
      .filter((parameter) => parameter.has(2))
      .map((parameter) => fields(fields(parameter.get(2)![0]!).get(3)?.[0] ?? new Uint8Array()))
      .map((sub) => text(sub.get(4)?.[0]));
    assert.ok(queryNames.includes('fieldValidation'), queryNames.join(','));
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startWebhookServer, type AdmissionResponse, type WebhookServer } from '@k8or/webhook';
import { HttpsClient } from './helpers/https-client.ts';
import { reviewOf, send } from './helpers/reviews.ts';
import { aws, bucket, providerConfig, table, testWorld } from './helpers/fixtures.ts';

/** Asserts a denial that names `field` and `rule`, both in the message (as `field: message (rule r)`) and in status.details.causes. */
function assertDenied(response: AdmissionResponse, field: string, rule: string, text?: RegExp): void {
  assert.equal(response.allowed, false, 'denied');
  const message = response.status?.message ?? '';
  const line = message.split('\n').find((l) => l.startsWith(`${field}: `) && l.endsWith(`(rule ${rule})`));
  assert.ok(line, `message names ${field} and rule ${rule}:\n${message}`);
  if (text) assert.match(line, text);
  const cause = response.status?.details?.causes.find((c) => c.field === field && c.reason === rule);
  assert.ok(cause, `status.details.causes has ${field} / ${rule}`);
}

const valid = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> =>
  bucket('apps', name, { providerConfigRef: { name: 'default' }, name: `apps-${name}`, deletionPolicy: 'Delete', ...spec });

describe('validating webhook: what the cloud would reject is rejected at apply', () => {
  let server: WebhookServer;
  let client: HttpsClient;

  before(async () => {
    server = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: testWorld(), logLevel: 'silent', processMetrics: false });
    client = new HttpsClient(server.url, server.caPem);
  });
  after(async () => {
    client.close();
    await server.close();
  });

  it('allows a valid Bucket and Table', async () => {
    const review = reviewOf('CREATE', valid('photos'));
    assert.deepEqual(await send(client, 'validate', review), { uid: review.request?.uid, allowed: true });
    const response = await send(client, 'validate', reviewOf('CREATE', table('apps', 'orders', { name: 'apps.orders', providerConfigRef: { name: 'default' } })));
    assert.equal(response.allowed, true);
  });

  it("denies a name the provider's rules reject, listing every violation in one answer", async () => {
    const response = await send(client, 'validate', reviewOf('CREATE', valid('bad', { name: '-Bad_Name' })));
    assertDenied(response, 'spec.name', 's3.characters', /lowercase letters, digits, dots/);
    assertDenied(response, 'spec.name', 's3.edges');
    assert.equal(response.status?.code, 422);
    assert.equal(response.status?.reason, 'Invalid');
    assert.match(response.status?.message ?? '', /^Bucket "bad" is invalid \(2 violations\):\n/);
    assert.equal(response.status?.details?.causes.length, 2);
  });

  it('denies a driftPolicy path that names no cloud setting of the kind, naming the entry and the rule', async () => {
    const policy = {
      driftPolicy: {
        default: 'Report',
        fields: [
          { path: 'spec.labels.team', mode: 'Hold' },
          { path: 'spec.versionin', mode: 'Hold' },
          { path: 'spec.deletionPolicy', mode: 'Report' },
          { path: 'spec.lifecycle.expirationDays', mode: 'Report' },
          { path: 'spec.versioning', mode: 'Repair' },
        ],
      },
    };
    const response = await send(client, 'validate', reviewOf('CREATE', valid('drift', policy)));
    assertDenied(response, 'spec.driftPolicy.fields[1].path', 'driftPolicy.path', /has no field "versionin"; its fields are .*versioning/);
    assertDenied(response, 'spec.driftPolicy.fields[2].path', 'driftPolicy.path', /k8or's own setting/);
    assertDenied(response, 'spec.driftPolicy.fields[3].path', 'driftPolicy.path', /spec\.lifecycle is a list/);
    assert.equal(response.status?.details?.causes.length, 3, 'the valid paths pass');
    const ok = await send(client, 'validate', reviewOf('CREATE', table('apps', 'orders', { name: 'apps.orders', providerConfigRef: { name: 'default' }, driftPolicy: { fields: [{ path: 'spec.billing.mode', mode: 'Hold' }] } })));
    assert.equal(ok.allowed, true);
  });

  it('denies a reference to a ProviderConfig that does not exist, or whose provider is not installed', async () => {
    const missing = await send(client, 'validate', reviewOf('CREATE', valid('x', { providerConfigRef: { name: 'nope' } })));
    assertDenied(missing, 'spec.providerConfigRef.name', 'providerconfig.exists', /ProviderConfig "nope" does not exist/);
    const fromNamespace = await send(client, 'validate', reviewOf('CREATE', bucket('team-b', 'y', { name: 'team-b-y' })));
    assertDenied(fromNamespace, 'spec.providerConfigRef.name', 'providerconfig.exists', /annotation of namespace team-b/);
    const gcp = await send(client, 'validate', reviewOf('CREATE', valid('z', { providerConfigRef: { name: 'google' } })));
    assertDenied(gcp, 'spec.providerConfigRef.name', 'providerconfig.provider-installed', /provider "gcp", which is not installed \(installed: aws\)/);
  });

  it('denies a resource when no ProviderConfig applies at all', async () => {
    const bare = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: testWorld({ providerConfigs: [] }), logLevel: 'silent', processMetrics: false });
    const other = new HttpsClient(bare.url, bare.caPem);
    try {
      assertDenied(await send(other, 'validate', reviewOf('CREATE', bucket('apps', 'lost'))), 'spec.providerConfigRef', 'providerconfig.required', /create the ProviderConfig named "default"/);
    } finally {
      other.close();
      await bare.close();
    }
  });

  it('denies changing the external name, a bucket location or a table key, with the old and new values', async () => {
    const stored = valid('media', { location: 'us-east-1' });
    const renamed = valid('media', { location: 'eu-west-1', name: 'apps-media-2' });
    const response = await send(client, 'validate', reviewOf('UPDATE', renamed, stored));
    assertDenied(response, 'spec.name', 'immutable.name', /was "apps-media", now "apps-media-2"/);
    assertDenied(response, 'spec.location', 'immutable.location', /was "us-east-1", now "eu-west-1"/);

    const storedTable = table('apps', 'orders', { name: 'apps.orders', providerConfigRef: { name: 'default' }, sortKey: { name: 'at', type: 'number' } });
    const rekeyed = table('apps', 'orders', { name: 'apps.orders', providerConfigRef: { name: 'default' }, partitionKey: { name: 'orderId', type: 'string' } });
    const keys = await send(client, 'validate', reviewOf('UPDATE', rekeyed, storedTable));
    assertDenied(keys, 'spec.partitionKey', 'immutable.partition-key', /was \{"name":"id","type":"string"\}, now \{"name":"orderId","type":"string"\}/);
    assertDenied(keys, 'spec.sortKey', 'immutable.sort-key', /was \{"name":"at","type":"number"\}, now unset/);
  });

  it('denies moving a created resource to a ProviderConfig of another cloud, but allows another account of the same cloud', async () => {
    const created = { ...valid('moving'), status: { atProvider: { id: 'arn:aws:s3:::apps-moving' } } };
    const toGcp = valid('moving', { providerConfigRef: { name: 'google' } });
    const response = await send(client, 'validate', reviewOf('UPDATE', toGcp, created));
    assertDenied(response, 'spec.providerConfigRef.name', 'immutable.provider', /was "default" \(aws\), now "google" \(gcp\); the cloud resource exists in aws/);
    const toStaging = valid('moving', { providerConfigRef: { name: 'staging' } });
    assert.equal((await send(client, 'validate', reviewOf('UPDATE', toStaging, created))).allowed, true);
    const neverCreated = valid('moving');
    const early = await send(client, 'validate', reviewOf('UPDATE', valid('moving', { providerConfigRef: { name: 'google' } }), neverCreated));
    assert.ok(!early.status?.details?.causes.some((c) => c.reason === 'immutable.provider'), 'nothing exists in the cloud yet, so nothing can be orphaned');
  });

  it('denies setting a location different from where the bucket already lives', async () => {
    const stored = { ...valid('old'), status: { atProvider: { location: 'us-east-1' } } };
    const moved = valid('old', { location: 'eu-central-1' });
    assertDenied(await send(client, 'validate', reviewOf('UPDATE', moved, stored)), 'spec.location', 'immutable.location', /exists in "us-east-1", now "eu-central-1"/);
    const confirmed = valid('old', { location: 'us-east-1' });
    assert.equal((await send(client, 'validate', reviewOf('UPDATE', confirmed, stored))).allowed, true);
  });

  it('lets an object admitted under older rules be edited without fixing what was already wrong', async () => {
    const legacy = valid('legacy', { name: 'Legacy_Bucket' });
    const edited = valid('legacy', { name: 'Legacy_Bucket', versioning: true });
    assert.equal((await send(client, 'validate', reviewOf('UPDATE', edited, legacy))).allowed, true);
    const finalizerRemoved = { ...edited, metadata: { ...(edited.metadata as object), deletionTimestamp: '2026-01-01T00:00:00Z' } };
    assert.equal((await send(client, 'validate', reviewOf('UPDATE', finalizerRemoved, legacy))).allowed, true);
  });

  it('denies a deletion-policy annotation that is neither Delete nor Retain, and an external-name annotation that disagrees with spec.name', async () => {
    const object = valid('anno');
    (object.metadata as Record<string, unknown>).annotations = { 'k8or.io/deletion-policy': 'Keep', 'k8or.io/external-name': 'something-else' };
    const response = await send(client, 'validate', reviewOf('CREATE', object));
    assertDenied(response, 'metadata.annotations[k8or.io/deletion-policy]', 'annotation.deletion-policy', /not "Keep"/);
    assertDenied(response, 'metadata.annotations[k8or.io/external-name]', 'annotation.external-name');
  });

  it('denies a k8or.io/resync-period that would hot-loop the cloud or means nothing, naming the annotation and the rule', async () => {
    const annotated = (period: string): Record<string, unknown> => {
      const object = valid(`resync-${period.replace(/[^a-z0-9]/g, '')}`);
      (object.metadata as Record<string, unknown>).annotations = { 'k8or.io/resync-period': period };
      return object;
    };
    const field = 'metadata.annotations[k8or.io/resync-period]';
    assertDenied(await send(client, 'validate', reviewOf('CREATE', annotated('1ns'))), field, 'resync-period.floor', /below the operator's floor of 10s/);
    assertDenied(await send(client, 'validate', reviewOf('CREATE', annotated('-5m'))), field, 'resync-period.positive', /positive duration/);
    assertDenied(await send(client, 'validate', reviewOf('CREATE', annotated('0s'))), field, 'resync-period.positive');
    assertDenied(await send(client, 'validate', reviewOf('CREATE', annotated('banana'))), field, 'resync-period.format', /"banana" is not a duration/);
    assert.equal((await send(client, 'validate', reviewOf('CREATE', annotated('30s')))).allowed, true);
    assert.equal((await send(client, 'validate', reviewOf('CREATE', annotated('1h30m')))).allowed, true);
  });

  it('warns when the deletion-policy annotation and spec.deletionPolicy disagree, saying which one applies', async () => {
    const object = valid('both', { deletionPolicy: 'Delete' });
    (object.metadata as Record<string, unknown>).annotations = { 'k8or.io/deletion-policy': 'Retain' };
    const response = await send(client, 'validate', reviewOf('CREATE', object));
    assert.equal(response.allowed, true);
    assert.deepEqual(response.warnings, [
      'metadata.annotations[k8or.io/deletion-policy] is Retain but spec.deletionPolicy is Delete: the annotation wins, the cloud resource will be kept when this object is deleted',
    ]);
  });

  it("returns the provider's portability warnings with an allowed answer", async () => {
    const object = valid('archive', { lifecycle: [{ id: 'cold', transitions: [{ days: 365, tier: 'Archive' }] }] });
    const response = await send(client, 'validate', reviewOf('CREATE', object));
    assert.equal(response.allowed, true);
    assert.equal(response.warnings?.length, 1);
    assert.match(response.warnings?.[0] ?? '', /^spec\.lifecycle\[0\]\.transitions: tier Archive maps to S3 GLACIER/);
  });

  it("denies what the provider's spec rules reject beyond naming, together with naming", async () => {
    const object = valid('cool', { name: 'x', lifecycle: [{ id: 'cool', transitions: [{ days: 7, tier: 'InfrequentAccess' }] }], location: 'moon-1' });
    const response = await send(client, 'validate', reviewOf('CREATE', object));
    assertDenied(response, 'spec.name', 's3.length');
    assertDenied(response, 'spec.location', 'aws.region', /"moon-1" is not an AWS region name/);
    assertDenied(response, 'spec.lifecycle[0].transitions', 's3.transition-days', /no earlier than 30 days after creation; found 7/);
    assert.ok(response.warnings?.some((w) => w.includes('STANDARD_IA')), 'warnings come with a denial too');
  });

  describe('ProviderConfig', () => {
    it("allows a valid one and denies the provider's own rules", async () => {
      assert.equal((await send(client, 'validate', reviewOf('CREATE', providerConfig('prod', { provider: 'aws', region: 'eu-west-1' })))).allowed, true);
      assertDenied(await send(client, 'validate', reviewOf('CREATE', providerConfig('prod', { provider: 'aws', region: 'mars-north-9' }))), 'spec.region', 'aws.region', /"mars-north-9" is not an AWS region name/);
    });

    it("checks spec.settings against the provider's declared schema, naming the field", async () => {
      const settingsWorld = testWorld({
        providers: [{ ...aws, settingsSchema: { type: 'object', properties: { accelerate: { type: 'boolean' }, retries: { type: 'integer', minimum: 0 } }, additionalProperties: false } }],
      });
      const settingsServer = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: settingsWorld, logLevel: 'silent', processMetrics: false });
      const settingsClient = new HttpsClient(settingsServer.url, settingsServer.caPem);
      try {
        const ok = providerConfig('tuned', { provider: 'aws', region: 'eu-west-1', settings: { accelerate: true, retries: 3 } });
        assert.equal((await send(settingsClient, 'validate', reviewOf('CREATE', ok))).allowed, true);
        const bad = providerConfig('tuned', { provider: 'aws', region: 'eu-west-1', settings: { accelerate: 'yes', retries: -1, colour: 'blue' } });
        const response = await send(settingsClient, 'validate', reviewOf('CREATE', bad));
        assertDenied(response, 'spec.settings.accelerate', 'settings.schema.type', /must be boolean/);
        assertDenied(response, 'spec.settings.retries', 'settings.schema.minimum');
        assertDenied(response, 'spec.settings.colour', 'settings.schema.additionalProperties', /not a setting this provider knows/);
      } finally {
        settingsClient.close();
        await settingsServer.close();
      }
      // A provider that declares no settings takes none: a setting never silently does nothing.
      const unknown = providerConfig('tuned', { provider: 'aws', region: 'eu-west-1', settings: { accelerate: true } });
      assertDenied(await send(client, 'validate', reviewOf('CREATE', unknown)), 'spec.settings', 'settings.unsupported', /declares no settings/);
    });

    it("checks spec.rateLimits against the provider's declared services, naming the field and the rule", async () => {
      const ok = providerConfig('paced', { provider: 'aws', region: 'eu-west-1', rateLimits: { 'dynamodb-control-plane': { requestsPerSecond: 5, burst: 10 }, 's3-buckets': { requestsPerSecond: 0.5 } } });
      const allowed = await send(client, 'validate', reviewOf('CREATE', ok));
      assert.equal(allowed.allowed, true);
      assert.equal(allowed.warnings, undefined, 'rates below the defaults: no warning');
      const bad = providerConfig('paced', { provider: 'aws', region: 'eu-west-1', rateLimits: { 'dynamo-control-plane': { burst: 1 }, 's3-buckets': { requestsPerSecond: 0, burst: 0 } } });
      const response = await send(client, 'validate', reviewOf('CREATE', bad));
      assertDenied(response, 'spec.rateLimits.dynamo-control-plane', 'rateLimits.service', /its services: s3-buckets, s3-objects, dynamodb-control-plane/);
      assertDenied(response, 'spec.rateLimits.s3-buckets.requestsPerSecond', 'rateLimits.requestsPerSecond.positive', /greater than 0/);
      assertDenied(response, 'spec.rateLimits.s3-buckets.burst', 'rateLimits.burst.integer', /at least 1/);
      const fast = await send(client, 'validate', reviewOf('CREATE', providerConfig('fast', { provider: 'aws', region: 'eu-west-1', rateLimits: { 'dynamodb-control-plane': { requestsPerSecond: 5000 } } })));
      assert.equal(fast.allowed, true);
      assert.match(fast.warnings?.[0] ?? '', /requestsPerSecond 5000 is above provider "aws"'s default of 250/);
    });

    it('checks spec.driftCheckBudget, naming the field and the rule', async () => {
      const calls = await send(client, 'validate', reviewOf('CREATE', providerConfig('budgeted', { provider: 'aws', region: 'eu-west-1', driftCheckBudget: { callsPerHour: 20_000 } })));
      assert.equal(calls.allowed, true);
      const share = await send(client, 'validate', reviewOf('CREATE', providerConfig('budgeted', { provider: 'aws', region: 'eu-west-1', driftCheckBudget: { rateLimitPercent: 10 } })));
      assert.equal(share.allowed, true);
      const both = providerConfig('budgeted', { provider: 'aws', region: 'eu-west-1', driftCheckBudget: { callsPerHour: 100, rateLimitPercent: 10 } });
      assertDenied(await send(client, 'validate', reviewOf('CREATE', both)), 'spec.driftCheckBudget', 'driftCheckBudget.exactlyOne', /exactly one of callsPerHour and rateLimitPercent/);
      const fraction = providerConfig('budgeted', { provider: 'aws', region: 'eu-west-1', driftCheckBudget: { callsPerHour: 0.5 } });
      assertDenied(await send(client, 'validate', reviewOf('CREATE', fraction)), 'spec.driftCheckBudget.callsPerHour', 'driftCheckBudget.callsPerHour.integer', /integer of at least 1/);
      const over = providerConfig('budgeted', { provider: 'aws', region: 'eu-west-1', driftCheckBudget: { rateLimitPercent: 150 } });
      assertDenied(await send(client, 'validate', reviewOf('CREATE', over)), 'spec.driftCheckBudget.rateLimitPercent', 'driftCheckBudget.rateLimitPercent.range', /from 1 to 100/);
    });

    it('warns about a provider that is not installed', async () => {
      const response = await send(client, 'validate', reviewOf('CREATE', providerConfig('azure', { provider: 'azure', storageAccount: 'acct1' })));
      assert.equal(response.allowed, true);
      assert.match(response.warnings?.[0] ?? '', /names provider "azure", which is not installed/);
    });

    it('denies a credentials Secret in a namespace the operator cannot read', async () => {
      const pc = providerConfig('creds', { provider: 'aws', region: 'us-east-1', credentials: { source: 'Secret', secretRef: { namespace: 'kube-system', name: 'aws' } } });
      assertDenied(await send(client, 'validate', reviewOf('CREATE', pc)), 'spec.credentials.secretRef.namespace', 'credentials.secret-namespace', /cannot read Secrets in namespace "kube-system"; use one of: k8or-system/);
      const readable = providerConfig('creds', { provider: 'aws', region: 'us-east-1', credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'aws' } } });
      assert.equal((await send(client, 'validate', reviewOf('CREATE', readable))).allowed, true);
    });

    it('denies changing the provider of one that resources use, naming them', async () => {
      const stored = providerConfig('default', { provider: 'aws', region: 'us-east-1' });
      const switched = providerConfig('default', { provider: 'gcp', project: 'my-project-1' });
      assertDenied(await send(client, 'validate', reviewOf('UPDATE', switched, stored)), 'spec.provider', 'providerconfig.in-use', /from "aws" to "gcp": 2 resource\(s\) still use it \(Bucket apps\/logs, Bucket apps\/media\)/);
      const unused = providerConfig('staging', { provider: 'gcp', project: 'my-project-1' });
      const response = await send(client, 'validate', reviewOf('UPDATE', unused, providerConfig('staging', { provider: 'aws', region: 'eu-west-1' })));
      assert.equal(response.allowed, true, 'nothing uses staging, so nothing is orphaned');
    });

    it('denies deleting one that resources use, and allows deleting an unused one', async () => {
      const response = await send(client, 'validate', reviewOf('DELETE', null, providerConfig('default', { provider: 'aws', region: 'us-east-1' })));
      assertDenied(response, 'metadata.name', 'providerconfig.in-use', /cannot be deleted: 2 resource\(s\) still use it/);
      assert.equal((await send(client, 'validate', reviewOf('DELETE', null, providerConfig('staging', { provider: 'aws', region: 'eu-west-1' })))).allowed, true);
    });
  });

  describe('deletion guard', () => {
    it('denies DELETE of a resource annotated k8or.io/protect: "true" and says how to lift it', async () => {
      const guarded = bucket('apps', 'ledger', { name: 'apps-ledger' }, { annotations: { 'k8or.io/protect': 'true' } });
      const response = await send(client, 'validate', reviewOf('DELETE', null, guarded));
      assertDenied(response, 'metadata.annotations[k8or.io/protect]', 'protect.delete', /kubectl annotate bucket ledger -n apps k8or\.io\/protect-/);
      assert.equal(response.status?.code, 403);
    });

    it('allows DELETE once the annotation is gone or not "true"', async () => {
      for (const annotations of [{}, { 'k8or.io/protect': 'false' }]) {
        const response = await send(client, 'validate', reviewOf('DELETE', null, table('apps', 'orders', {}, { annotations })));
        assert.equal(response.allowed, true);
      }
    });
  });

  it('keeps a denial readable when a hostile object breaks hundreds of rules with huge values', async () => {
    const labels = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`aws:key${i}`, 'v']));
    const response = await send(client, 'validate', reviewOf('CREATE', valid('noisy', { name: 'n'.repeat(100_000), labels })));
    assert.equal(response.allowed, false);
    const message = response.status?.message ?? '';
    assert.match(message, /^Bucket "noisy" is invalid \(202 violations\):/);
    assert.match(message, /\n\.\.\. and 152 more$/);
    assert.equal(response.status?.details?.causes.length, 50);
    assert.ok(message.length < 60_000, `message is ${message.length} characters`);
    assert.match(message, /\.\.\. \(\d+ more characters\)/);
  });

  it('denies a CREATE review that carries no object, with the reason', async () => {
    const review = reviewOf('CREATE', null);
    const response = await send(client, 'validate', review);
    assertDenied(response, 'request.object', 'request.object', /must carry the object/);
  });

  it('answers a dry run exactly like a real request', async () => {
    const real = await send(client, 'validate', reviewOf('CREATE', valid('dry', { name: 'BAD' })));
    const dry = await send(client, 'validate', reviewOf('CREATE', valid('dry', { name: 'BAD' }), null, { dryRun: true }));
    assert.deepEqual(dry.status, real.status);
  });

  it('counts every review in Prometheus metrics', async () => {
    const metrics = await client.get('/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /k8or_admission_reviews_total\{webhook="validate",kind="Bucket",operation="CREATE",result="denied"\} \d+/);
    assert.match(metrics.text, /k8or_admission_reviews_total\{webhook="validate",kind="Bucket",operation="CREATE",result="allowed"\} \d+/);
    assert.match(metrics.text, /k8or_admission_review_duration_seconds_count\{webhook="validate",kind="ProviderConfig",operation="DELETE"\} \d+/);
  });
});

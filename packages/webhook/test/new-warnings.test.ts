// A portability warning comes with the write that introduces or changes what it is about, not with
// every later write to the same object.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startWebhookServer, type WebhookServer } from '@k8or/webhook';
import { HttpsClient } from './helpers/https-client.ts';
import { reviewOf, send } from './helpers/reviews.ts';
import { bucket, testWorld } from './helpers/fixtures.ts';

const archived = (tier: string, labels: Record<string, string> = {}): Record<string, unknown> => {
  const object = bucket('apps', 'archive', { providerConfigRef: { name: 'default' }, name: 'apps-archive', deletionPolicy: 'Delete', lifecycle: [{ id: 'cold', transitions: [{ days: 365, tier }] }] });
  (object['metadata'] as Record<string, unknown>)['labels'] = labels;
  return object;
};

describe('validating webhook: warnings once per change', () => {
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

  it('warns on the create that introduces it', async () => {
    const response = await send(client, 'validate', reviewOf('CREATE', archived('Archive')));
    assert.equal(response.warnings?.length, 1);
    assert.match(response.warnings?.[0] ?? '', /^spec\.lifecycle\[0\]\.transitions: tier Archive maps to S3 GLACIER/);
  });

  it('does not warn again on an unrelated update (a label, as kubectl label writes it)', async () => {
    const response = await send(client, 'validate', reviewOf('UPDATE', archived('Archive', { team: 'media' }), archived('Archive')));
    assert.equal(response.allowed, true);
    assert.equal(response.warnings, undefined);
  });

  it('warns on the update that introduces it', async () => {
    const response = await send(client, 'validate', reviewOf('UPDATE', archived('Archive'), archived('InfrequentAccess')));
    assert.match(response.warnings?.join('\n') ?? '', /tier Archive maps to S3 GLACIER/);
  });

  it('warns on an update that adds something else to warn about, and only about that', async () => {
    const stored = archived('Archive');
    const changed = archived('Archive');
    const lifecycle = (changed['spec'] as Record<string, unknown>)['lifecycle'] as Record<string, unknown>[];
    lifecycle.push({ id: 'cool', transitions: [{ days: 30, tier: 'InfrequentAccess' }] });
    const response = await send(client, 'validate', reviewOf('UPDATE', changed, stored));
    assert.equal(response.warnings?.length, 1, JSON.stringify(response.warnings));
    assert.match(response.warnings?.[0] ?? '', /^spec\.lifecycle\[1\]\.transitions: tier InfrequentAccess maps to S3 STANDARD_IA/);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, resolveConfig } from '@k8or/operator';

describe('operator configuration: flags over environment over defaults, checked at start', () => {
  it('takes the defaults when nothing is given', () => {
    const config = resolveConfig({}, {}, ['controllers']);
    assert.deepEqual(config.providers, []);
    assert.equal(config.workers, 10);
    assert.equal(config.resyncPeriodMs, 3_600_000);
    assert.equal(config.minResyncPeriodMs, 10_000);
    assert.equal(config.defaultDeletionPolicy, 'Delete');
    assert.equal(config.leaderElect, false);
    assert.deepEqual(config.probeAddress, { host: '0.0.0.0', port: 8081 });
  });

  it('reads the environment, and a flag wins over it', () => {
    const env = { K8OR_PROVIDERS: 'aws, k8or-provider-foo', K8OR_WORKERS: 'Bucket=4,table=2', K8OR_LEADER_ELECT: 'true', K8OR_RESYNC_PERIOD: '10m' };
    const config = resolveConfig({ 'resync-period': '5m', namespaces: 'team-a,team-b' }, env, ['controllers', 'webhook']);
    assert.deepEqual(config.providers, ['aws', 'k8or-provider-foo']);
    assert.deepEqual(config.workers, { Bucket: 4, Table: 2 });
    assert.equal(config.leaderElect, true);
    assert.equal(config.resyncPeriodMs, 300_000);
    assert.deepEqual(config.namespaces, ['team-a', 'team-b']);
    assert.deepEqual(config.components, ['controllers', 'webhook']);
  });

  it('shares the webhook certificate through a Secret in the Service\'s namespace, checked every minute by default', () => {
    const env = { K8OR_WEBHOOK_SERVICE_NAME: 'k8or-webhook', K8OR_WEBHOOK_SERVICE_NAMESPACE: 'k8or-system', K8OR_WEBHOOK_CERT_SECRET: 'k8or-webhook-cert' };
    const config = resolveConfig({}, env, ['controllers', 'webhook']);
    assert.equal(config.webhookCertSecret, 'k8or-webhook-cert');
    assert.equal(config.webhookCertCheckIntervalMs, 60_000);
    assert.equal(resolveConfig({ 'webhook-cert-check-interval': '1s' }, env, ['webhook']).webhookCertCheckIntervalMs, 1_000);
  });

  const bad: [Record<string, string>, Record<string, string>, RegExp][] = [
    [{ workers: 'lots' }, {}, /^--workers \(K8OR_WORKERS\) must be a number from 1 to 1000, or per kind as Bucket=N,Table=N, got "lots"$/],
    [{}, { K8OR_WORKERS: '0' }, /^--workers \(K8OR_WORKERS\) .* got "0"$/],
    [{ 'resync-period': 'hourly' }, {}, /^--resync-period \(K8OR_RESYNC_PERIOD\) must be a duration such as 30s, 5m or 1h, got "hourly"$/],
    [{ 'resync-period': '5s' }, {}, /^--resync-period \(K8OR_RESYNC_PERIOD\) must not be shorter than --min-resync-period \(10s\), got "5s"$/],
    [{ 'default-deletion-policy': 'Orphan' }, {}, /^--default-deletion-policy \(K8OR_DEFAULT_DELETION_POLICY\) must be one of Delete, Retain, got "Orphan"$/],
    [{}, { K8OR_METRICS_BIND_ADDRESS: 'localhost' }, /^--metrics-bind-address \(K8OR_METRICS_BIND_ADDRESS\) must be HOST:PORT/],
    [{ namespaces: 'Team_A' }, {}, /^--namespaces \(K8OR_NAMESPACES\) must be a comma-separated list of namespace names/],
    [{ 'leader-elect': 'maybe' }, {}, /^--leader-elect \(K8OR_LEADER_ELECT\) must be true or false, got "maybe"$/],
    [{ 'log-level': 'loud' }, {}, /^--log-level \(K8OR_LOG_LEVEL\) must be one of trace, debug, info, warn, error, fatal, silent, got "loud"$/],
    [{ providers: 'AWS!' }, {}, /^--providers \(K8OR_PROVIDERS\) must be a comma-separated list of provider or npm package names, got "AWS!"$/],
    [{}, { K8OR_WEBHOOK_CERT_SECRET: 'k8or-webhook-cert' }, /^--webhook-cert-secret \(K8OR_WEBHOOK_CERT_SECRET\) needs --webhook-service-namespace: the Secret is kept in the namespace of the webhook Service, got "k8or-webhook-cert"$/],
    [{ 'webhook-cert-check-interval': 'often' }, {}, /^--webhook-cert-check-interval \(K8OR_WEBHOOK_CERT_CHECK_INTERVAL\) must be a duration such as 30s, 5m or 1h, got "often"$/],
  ];
  for (const [flags, env, message] of bad) {
    it(`refuses ${JSON.stringify({ ...flags, ...env })}, naming the setting and the rule`, () => {
      assert.throws(() => resolveConfig(flags, env, ['controllers']), (error: unknown) => error instanceof ConfigError && message.test(error.message));
    });
  }
});

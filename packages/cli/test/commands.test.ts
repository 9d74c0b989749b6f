import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { k8or, k8orBin } from './support.ts';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

const PROVIDER_CONFIG = `apiVersion: k8or.io/v1alpha1
kind: ProviderConfig
metadata:
  name: default
spec:
  provider: aws
  region: us-east-1
  credentials:
    source: Secret
    secretRef: { namespace: k8or-system, name: aws-credentials }
`;

const GOOD = `${PROVIDER_CONFIG}---
apiVersion: k8or.io/v1alpha1
kind: Bucket
metadata:
  name: photos
spec:
  versioning: true
---
apiVersion: k8or.io/v1alpha1
kind: Table
metadata:
  name: orders
  namespace: shop
spec:
  partitionKey: { name: customerId, type: string }
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: not-ours
`;

const BAD_BUCKET = `apiVersion: k8or.io/v1alpha1
kind: Bucket
metadata:
  name: photos
  annotations:
    k8or.io/deletion-policy: Sometimes
spec:
  name: Bad_Name
`;

const BAD_TABLE = `apiVersion: k8or.io/v1alpha1
kind: Table
metadata:
  name: orders
spec:
  partitionKey: { name: id, type: string }
  billing: { mode: provisioned }
`;

interface JsonReport {
  valid: boolean;
  objects: { source: string; document: number; kind: string; name: string; valid: boolean; violations: { field: string; rule: string }[]; defaulted: { spec?: Record<string, unknown> } }[];
}

describe('k8or validate: the webhook\'s rules, offline', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-validate-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    return path;
  };

  it('exits 0 for valid manifests (multi-document YAML), skipping kinds that are not k8or\'s', async () => {
    const result = await k8or(['validate', '-f', file('good.yaml', GOOD)]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /good\.yaml#2: Bucket default\/photos: valid/);
    assert.match(result.stdout, /good\.yaml#3: Table shop\/orders: valid/);
    assert.match(result.stdout, /3 objects: 3 valid, 0 invalid/);
  });

  it('exits 1 and reports every violation of every object in one run, across a directory', async () => {
    const folder = join(dir, 'estate');
    file('estate/pc.yaml', PROVIDER_CONFIG);
    file('estate/bucket.yml', BAD_BUCKET);
    file('estate/table.json', JSON.stringify(parseAllDocuments(BAD_TABLE)[0]?.toJS()));
    file('estate/notes.txt', 'not a manifest');
    file('estate/more/nested.yaml', BAD_TABLE.replace('name: orders', 'name: nested'));
    const result = await k8or(['validate', '-f', folder]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /bucket\.yml#1: Bucket default\/photos: 3 violations/);
    assert.match(result.stdout, /metadata\.annotations\[k8or\.io\/deletion-policy\]: must be Delete or Retain, not "Sometimes" \(rule annotation\.deletion-policy\)/);
    assert.match(result.stdout, /spec\.name: .* \(rule s3\.characters\)/);
    assert.match(result.stdout, /table\.json#1: Table default\/orders: 1 violation/);
    assert.match(result.stdout, /spec\.billing: provisioned billing needs readCapacity and writeCapacity/);
    assert.match(result.stdout, /3 objects: 1 valid, 2 invalid \(4 violations\)/);
  });

  it('refuses what the API server refuses before any webhook: wrong types, values out of the schema, unknown fields, bad names', async () => {
    const bucket = (name: string, spec: string, metadataName = name): string =>
      `---\napiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: ${metadataName}\nspec:\n${spec}\n`;
    const manifests = [
      PROVIDER_CONFIG,
      bucket('typed', '  versioning: "yes"'),
      bucket('typo', '  versionning: true'),
      bucket('unlisted', '  publicAccess: Open'),
      bucket('labelled', '  labels: { Team: media }'),
      bucket('bad-name', '  versioning: true', 'Not_A_Name'),
      `---\napiVersion: k8or.io/v1alpha1\nkind: Table\nmetadata:\n  name: dated\nspec:\n  partitionKey: { name: id, type: date }\n  billing: { mode: provisioned, readCapacity: 0, writeCapacity: 5 }\n`,
    ].join('');
    const result = await k8or(['validate', '-f', '-', '-o', 'json'], { input: manifests });
    assert.equal(result.code, 1, result.stdout + result.stderr);
    const report = JSON.parse(result.stdout) as JsonReport;
    const fieldsOf = (name: string): string[] => report.objects.find((o) => o.name === name)?.violations.map((v) => `${v.field} ${v.rule}`) ?? [];
    assert.deepEqual(fieldsOf('typed'), ['spec.versioning schema.type']);
    assert.deepEqual(fieldsOf('typo'), ['spec.versionning schema.unknown-field']);
    assert.deepEqual(fieldsOf('unlisted'), ['spec.publicAccess schema.enum']);
    assert.deepEqual(fieldsOf('labelled'), ['spec.labels schema.invalid']);
    assert.deepEqual(fieldsOf('Not_A_Name'), ['metadata.name metadata.name']);
    assert.deepEqual(fieldsOf('dated').sort(), ['spec.billing.readCapacity schema.invalid', 'spec.partitionKey.type schema.enum']);
    assert.equal(report.objects.filter((o) => o.valid).length, 1, 'only the ProviderConfig is valid');
  });

  it('writes a whole -o json report through a pipe, however large, before it exits', async () => {
    const buckets = Array.from({ length: 1500 }, (_, i) => `---\napiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: b-${i}\nspec:\n  versioning: "yes"\n`).join('');
    const result = await k8or(['validate', '-f', '-', '-o', 'json'], { input: PROVIDER_CONFIG + buckets });
    assert.equal(result.code, 1);
    assert.ok(result.stdout.length > 1_000_000, `a report of ${result.stdout.length} characters`);
    const report = JSON.parse(result.stdout) as JsonReport;
    assert.equal(report.objects.length, 1501);
  });

  it('reports both objects of the files that name one cloud resource, each naming the other', async () => {
    const table = (namespace: string, name: string): string =>
      `---\napiVersion: k8or.io/v1alpha1\nkind: Table\nmetadata: { name: ${name}, namespace: ${namespace} }\nspec:\n  name: orders\n  partitionKey: { name: id, type: string }\n`;
    const result = await k8or(['validate', '-f', file('twins.yaml', PROVIDER_CONFIG + table('shop', 'orders') + table('apps', 'orders-copy'))]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /twins\.yaml#2: Table shop\/orders: 1 violation\n.*spec\.name: Table apps\/orders-copy already names the Table "orders" in aws \(region=us-east-1\).*\(rule cloud-resource\.one-object\)/);
    assert.match(result.stdout, /twins\.yaml#3: Table apps\/orders-copy: 1 violation\n.*spec\.name: Table shop\/orders already names/);
  });

  it('reads subdirectories only with -R', async () => {
    const result = await k8or(['validate', '-f', join(dir, 'estate'), '-R']);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /nested\.yaml#1: Table default\/nested: 1 violation/);
    assert.match(result.stdout, /4 objects: 1 valid, 3 invalid \(5 violations\)/);
  });

  it('prints JSON with -o json, defaults applied as the mutating webhook would, reading stdin with -f -', async () => {
    const result = await k8or(['validate', '-f', '-', '-o', 'json', '--cluster-id', 'test-cluster'], { input: `${GOOD}---\n${BAD_TABLE.replace('name: orders', 'name: ledger')}` });
    assert.equal(result.code, 1, result.stderr);
    const report = JSON.parse(result.stdout) as JsonReport;
    assert.equal(report.valid, false);
    assert.deepEqual(
      report.objects.map((o) => [o.source, o.document, o.kind, o.name, o.valid]),
      [
        ['-', 1, 'ProviderConfig', 'default', true],
        ['-', 2, 'Bucket', 'photos', true],
        ['-', 3, 'Table', 'orders', true],
        ['-', 5, 'Table', 'ledger', false],
      ],
    );
    const bucket = report.objects[1]?.defaulted.spec;
    assert.deepEqual(bucket?.providerConfigRef, { name: 'default' });
    assert.equal(bucket?.deletionPolicy, 'Delete');
    assert.match(String(bucket?.name), /^default-photos-[0-9a-f]{8}$/);
    assert.deepEqual(report.objects[3]?.violations.map((v) => v.rule), ['dynamodb.provisioned-capacity']);
  });

  it('reports a YAML syntax error as a violation of that document and checks the rest', async () => {
    const result = await k8or(['validate', '-f', file('broken.yaml', `${PROVIDER_CONFIG}---\nkind: [unclosed\n`)]);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /broken\.yaml#2: document: 1 violation/);
    assert.match(result.stdout, /rule yaml\.syntax/);
    assert.match(result.stdout, /broken\.yaml#1: ProviderConfig default: valid/);
  });

  const usage: [string[], RegExp][] = [
    [['validate'], /required option '-f, --filename <FILE\|DIR\|->' not specified/],
    [['validate', '-f', '/no/such/file.yaml'], /-f \/no\/such\/file\.yaml: no such file or directory/],
    [['validate', '-f', 'x.yaml', '-o', 'xml'], /option '-o, --output <FORMAT>' argument 'xml' is invalid\. Allowed choices are human, json/],
    [['validate', '-f', 'x.yaml', '--frobnicate'], /unknown option '--frobnicate'/],
  ];
  for (const [args, message] of usage) {
    it(`exits 2 for k8or ${args.join(' ')}, naming the flag`, async () => {
      const result = await k8or(args);
      assert.equal(result.code, 2, result.stdout + result.stderr);
      assert.match(result.stderr, message);
    });
  }
});

describe('k8or: help, crds, and the Node version', () => {
  it('k8or --help lists every command; each command has help for each flag', async () => {
    const top = await k8or(['--help']);
    assert.equal(top.code, 0);
    for (const command of ['sandbox', 'operator', 'webhook', 'validate', 'plan', 'import', 'trace', 'crds']) assert.match(top.stdout, new RegExp(`^  ${command}\\b`, 'm'));
    const operator = await k8or(['operator', '--help']);
    assert.equal(operator.code, 0);
    for (const flag of ['--providers', '--provider-root', '--namespaces', '--workers', '--resync-period', '--min-resync-period', '--reconcile-timeout', '--default-deletion-policy', '--leader-elect', '--leader-election-namespace', '--metrics-bind-address', '--health-probe-bind-address', '--log-level', '--webhook']) {
      assert.match(operator.stdout, new RegExp(`${flag}\\b.*\\S`), flag);
    }
    assert.match(operator.stdout, /env K8OR_WORKERS;\s+default\s+10/);
    const trace = await k8or(['trace', '--help']);
    assert.equal(trace.code, 0);
    for (const flag of ['--namespace', '--kubeconfig', '--context', '--cluster-id', '--output', '--providers']) assert.match(trace.stdout, new RegExp(`${flag}\\b.*\\S`), flag);
  });

  it('k8or crds prints the three CRDs', async () => {
    const result = await k8or(['crds']);
    assert.equal(result.code, 0);
    const names = parseAllDocuments(result.stdout).map((d) => (d.toJS() as { metadata: { name: string } }).metadata.name);
    assert.deepEqual(names.sort(), ['buckets.k8or.io', 'providerconfigs.k8or.io', 'tables.k8or.io']);
  });

  it('npx k8or --help works from the repository', () => {
    const out = execFileSync('npx', ['--no-install', 'k8or', '--help'], { cwd: repo, encoding: 'utf8' });
    assert.match(out, /Usage: k8or/);
  });

  it('an older Node says which version it needs and which it found', (t) => {
    const old = oldNode();
    if (!old) {
      t.skip('no Node older than 22 on this machine');
      return;
    }
    let stderr = '';
    let status = 0;
    try {
      execFileSync(old.path, [k8orBin, '--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      ({ stderr, status } = error as { stderr: string; status: number });
    }
    assert.equal(status, 1);
    assert.match(stderr, new RegExp(`k8or needs Node\\.js 22 or later; this is Node\\.js ${old.version.replace(/\./g, '\\.')}`));
  });
});

/** A Node older than 22 on PATH (the machines have Node 20 preinstalled beside the one npm ci brings). */
function oldNode(): { path: string; version: string } | undefined {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/bin', '/usr/local/bin'])) {
    const path = join(dir, 'node');
    try {
      const version = execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
      if (Number(version.split('.')[0]) < 22) return { path, version };
    } catch {
      // not there
    }
  }
  return undefined;
}


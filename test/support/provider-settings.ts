// The provider settings a run uses: ProviderConfigs and the Secrets they name, as manifests a
// platform team applies with kubectl. The sandbox's point at the local backends; another cluster's
// come from a file (K8OR_E2E_PROVIDER_CONFIGS). The suite applies them, and reads the clouds with them.
import { readFile, writeFile } from 'node:fs/promises';
import { parseAllDocuments, stringify } from 'yaml';
import type { ProviderConfig, SecretReference } from '@k8or/api';

export interface SecretManifest {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace?: string };
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export interface ProviderSettings {
  providerConfigs: ProviderConfig[];
  secrets: SecretManifest[];
}

export const SANDBOX_CREDENTIALS = { accessKeyId: 'AKIASANDBOXEXAMPLE00', secretAccessKey: 'sandbox-secret-access-key-not-a-real-one' };
export const GCP_PROJECT = 'k8or-sandbox';
export const GCP_INSTANCE = 'k8or-sandbox';

/** Where the sandbox's local clouds listen. */
export interface LocalEndpoints {
  s3: string;
  dynamodb: string;
  gcs: string;
  /** host:port of the Bigtable emulator, when it runs. */
  bigtable: string | undefined;
}

/**
 * The sandbox's settings, the two ProviderConfigs `k8or sandbox` makes: `default` (AWS, keys in a
 * Secret in `secretNamespace`) and `local-gcp` (GCP; a Bigtable instance only where the emulator runs).
 */
export function sandboxProviderSettings(secretNamespace: string, endpoints: LocalEndpoints): ProviderSettings {
  return {
    secrets: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'aws-credentials', namespace: secretNamespace }, type: 'Opaque', stringData: SANDBOX_CREDENTIALS }],
    providerConfigs: [
      {
        apiVersion: 'k8or.io/v1alpha1',
        kind: 'ProviderConfig',
        metadata: { name: 'default' },
        spec: {
          provider: 'aws',
          region: 'us-east-1',
          endpoints: { bucket: endpoints.s3, table: endpoints.dynamodb },
          credentials: { source: 'Secret', secretRef: { namespace: secretNamespace, name: 'aws-credentials' } },
        },
      },
      {
        apiVersion: 'k8or.io/v1alpha1',
        kind: 'ProviderConfig',
        metadata: { name: 'local-gcp' },
        spec: {
          provider: 'gcp',
          project: GCP_PROJECT,
          region: 'us-central1',
          ...(endpoints.bigtable ? { bigtableInstance: GCP_INSTANCE } : {}),
          endpoints: { bucket: endpoints.gcs, ...(endpoints.bigtable ? { table: `http://${endpoints.bigtable}` } : {}) },
          credentials: { source: 'Environment' },
        },
      },
    ],
  };
}

/** Writes the settings as K8OR_E2E_PROVIDER_CONFIGS takes them (YAML documents; mode 0600: it holds Secrets). */
export async function writeProviderSettings(file: string, settings: ProviderSettings): Promise<void> {
  await writeFile(file, [...settings.secrets, ...settings.providerConfigs].map((m) => stringify(m)).join('---\n'), { mode: 0o600 });
}

/**
 * Reads a file of ProviderConfigs and Secrets (YAML, several documents). Anything else in it is
 * refused, as is a Secret without a namespace or a ProviderConfig naming a Secret the file lacks.
 */
export async function readProviderSettings(file: string): Promise<ProviderSettings> {
  const settings: ProviderSettings = { providerConfigs: [], secrets: [] };
  for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
    const manifest = doc.toJSON() as { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } } | null;
    if (!manifest) continue;
    const what = `${manifest.kind ?? '(no kind)'} ${manifest.metadata?.name ?? '(no name)'}`;
    if (!manifest.metadata?.name) throw new Error(`${file}: ${what} has no metadata.name`);
    if (manifest.apiVersion === 'k8or.io/v1alpha1' && manifest.kind === 'ProviderConfig') settings.providerConfigs.push(manifest as ProviderConfig);
    else if (manifest.apiVersion === 'v1' && manifest.kind === 'Secret') {
      if (!manifest.metadata.namespace) throw new Error(`${file}: Secret ${manifest.metadata.name} needs metadata.namespace (a ProviderConfig's secretRef names one)`);
      settings.secrets.push(manifest as SecretManifest);
    } else throw new Error(`${file}: ${what} (${manifest.apiVersion ?? ''}) is neither a ProviderConfig (k8or.io/v1alpha1) nor a Secret (v1)`);
  }
  for (const config of settings.providerConfigs) {
    const ref = config.spec.credentials?.source === 'Secret' ? config.spec.credentials.secretRef : undefined;
    if (ref && !findSecret(settings, ref)) throw new Error(`${file}: ProviderConfig ${config.metadata.name ?? ''} names Secret ${ref.namespace}/${ref.name}, which the file does not hold`);
  }
  return settings;
}

function findSecret(settings: ProviderSettings, ref: SecretReference): SecretManifest | undefined {
  return settings.secrets.find((s) => s.metadata.name === ref.name && s.metadata.namespace === ref.namespace);
}

/** The ProviderConfig of that name, if the settings hold one. */
export function providerConfigNamed(settings: ProviderSettings, name: string): ProviderConfig | undefined {
  return settings.providerConfigs.find((c) => c.metadata.name === name);
}

/** The data of the Secret a ProviderConfig's credentials name (stringData over data, as the API server merges them), or undefined. */
export function credentialsSecretData(settings: ProviderSettings, config: ProviderConfig): Record<string, string> | undefined {
  const ref = config.spec.credentials?.source === 'Secret' ? config.spec.credentials.secretRef : undefined;
  const secret = ref ? findSecret(settings, ref) : undefined;
  if (!secret) return undefined;
  const decoded = Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
  return { ...decoded, ...secret.stringData };
}

/** The providers the settings use, each enabled in the chart. */
export function providersOf(settings: ProviderSettings): string[] {
  return [...new Set(settings.providerConfigs.map((c) => c.spec.provider))].sort();
}

/** Every manifest, Secrets first (a ProviderConfig's validation may read its Secret), for `kubectl apply -f -`. */
export function settingsManifests(settings: ProviderSettings): string {
  return [...settings.secrets, ...settings.providerConfigs].map((m) => JSON.stringify(m)).join('\n');
}

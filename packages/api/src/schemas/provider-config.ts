import { immutable, int, map, obj, str, type JSONSchemaProps } from './json-schema.js';
import { conditionsSchema, DNS_LABEL, DNS_SUBDOMAIN } from './common.js';

const url = (description: string): JSONSchemaProps => str(description, { pattern: '^https?://[^\\s]+$', maxLength: 2048 });

export const providerConfigSpecSchema: JSONSchemaProps = obj(
  'Which cloud to talk to, where, and with which credentials.',
  {
    provider: str(
      'The provider that serves this config: aws, gcp, azure, or the name a third-party provider package declares. A lowercase DNS label. Immutable: resources already created there would be orphaned.',
      { minLength: 1, maxLength: 63, pattern: DNS_LABEL, 'x-kubernetes-validations': [immutable('provider')] },
    ),
    region: str('AWS region (required for aws), also the default location for buckets that name none.', { pattern: '^[a-z0-9-]+$', maxLength: 64 }),
    project: str('GCP project ID (required for gcp).', { pattern: '^[a-z][a-z0-9-]{4,28}[a-z0-9]$' }),
    storageAccount: str('Azure storage account name (required for azure).', { pattern: '^[a-z0-9]{3,24}$' }),
    bigtableInstance: str('Bigtable instance ID that holds Tables (gcp only).', { pattern: '^[a-z][a-z0-9-]{4,31}[a-z0-9]$' }),
    endpoint: url('Override of the cloud API endpoint for every service (emulators, MinIO, LocalStack, sovereign clouds).'),
    endpoints: obj('Per-kind endpoint overrides, for emulators that serve buckets and tables on different addresses. Win over endpoint.', {
      bucket: url('Endpoint for Bucket calls (S3, GCS or Blob service).'),
      table: url('Endpoint for Table calls (DynamoDB, Bigtable emulator host:port as http://host:port, or Table service).'),
    }),
    settings: {
      type: 'object',
      description: 'Settings of this provider beyond the common fields, checked against the schema the provider package declares (by the webhook, and by the operator before it uses the config).',
      'x-kubernetes-preserve-unknown-fields': true,
    },
    rateLimits: map(
      'Overrides of the control-plane rate limits the provider declares, by service name (for example dynamodb-control-plane, s3-buckets, gcs-bucket-create-delete, bigtable-table-writes, blob-containers). The engine keeps the cloud calls made through this ProviderConfig within them, with one token bucket per service. A field left out keeps the provider default; see the provider\'s documentation page for its services and defaults.',
      obj(
        'The pace of one service.',
        {
          requestsPerSecond: {
            type: 'number',
            description: 'Sustained calls per second, greater than 0; fractions allowed (0.5 is one call every two seconds).',
            minimum: 0,
            exclusiveMinimum: true,
          },
          burst: int('Calls that may go at once after a quiet spell (the size of the token bucket), at least 1.', { minimum: 1 }),
        },
        { minProperties: 1 },
      ),
      { maxProperties: 64 },
    ),
    driftCheckBudget: obj(
      'The cloud calls an hour that the drift checks of all resources using this ProviderConfig may make together; set exactly one field. The operator spreads the checks over time to fit: a resource whose k8or.io/resync-period (or the operator default) asks for more is checked less often, at the interval the budget allows, shown in its status.driftCheckInterval with an Event saying why. Without it, every resource is checked at the interval it asks for.',
      {
        callsPerHour: int('Cloud calls an hour for the drift checks of every resource of this ProviderConfig, at least 1.', { minimum: 1 }),
        rateLimitPercent: int(
          'A percentage (1 to 100) of each rate-limited service\'s rate in force (spec.rateLimits, else the provider default), for the drift checks whose calls draw on that service.',
          { minimum: 1, maximum: 100 },
        ),
      },
      {
        'x-kubernetes-validations': [
          { rule: 'has(self.callsPerHour) != has(self.rateLimitPercent)', message: 'driftCheckBudget: set exactly one of callsPerHour and rateLimitPercent' },
        ],
      },
    ),
    credentials: obj(
      'Where the provider finds credentials.',
      {
        source: str(
          'Secret reads keys from secretRef; InjectedIdentity uses the workload identity the pod was given (IRSA, EKS Pod Identity, GKE Workload Identity, Azure Workload Identity); Environment uses the SDK\'s default chain.',
          { enum: ['Secret', 'InjectedIdentity', 'Environment'], default: 'Environment' },
        ),
        secretRef: obj(
          'The Secret holding credentials, in a namespace the operator can read. Keys per cloud: aws accessKeyId, secretAccessKey, sessionToken; gcp credentials.json; azure accountKey or connectionString.',
          {
            namespace: str('Namespace of the Secret.', { minLength: 1, maxLength: 63, pattern: DNS_SUBDOMAIN }),
            name: str('Name of the Secret.', { minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN }),
          },
          { required: ['namespace', 'name'] },
        ),
      },
      {
        'x-kubernetes-validations': [
          { rule: "self.source == 'Secret' ? has(self.secretRef) : !has(self.secretRef)", message: 'credentials.secretRef is required with source Secret and not allowed otherwise' },
        ],
      },
    ),
  },
  {
    required: ['provider'],
    'x-kubernetes-validations': [
      { rule: "self.provider != 'aws' || has(self.region)", message: 'spec.region is required for provider aws' },
      { rule: "self.provider != 'gcp' || has(self.project)", message: 'spec.project is required for provider gcp' },
      { rule: "self.provider != 'azure' || has(self.storageAccount)", message: 'spec.storageAccount is required for provider azure' },
      { rule: "self.provider == 'gcp' || !has(self.bigtableInstance)", message: 'spec.bigtableInstance is only valid for provider gcp' },
    ],
  },
);

export const providerConfigSchema: JSONSchemaProps = obj(
  'A ProviderConfig tells k8or how to reach one cloud account: the provider, its region, project or storage account, and credentials. The one named "default" is used by resources that name none.',
  {
    apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
    kind: str('Kind is a string value representing the REST resource this object represents.'),
    metadata: { type: 'object', description: 'Standard object metadata.' },
    spec: providerConfigSpecSchema,
    status: obj('Observed state, written by the operator.', {
      conditions: conditionsSchema,
      observedGeneration: int('The .metadata.generation the operator last saw.', { minimum: 0 }),
    }),
  },
  { required: ['spec'] },
);

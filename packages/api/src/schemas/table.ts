import { bool, immutable, int, notRemovable, obj, str, type JSONSchemaProps } from './json-schema.js';
import {
  deletionPolicySchema,
  driftPolicySchema,
  externalNameSchema,
  labelsSchema,
  managedStatusSchema,
  managementPolicySchema,
  providerConfigRefSchema,
  writeOutputsToSchema,
} from './common.js';

const keyAttribute = (description: string): JSONSchemaProps =>
  obj(
    description,
    {
      name: str('Attribute name.', { minLength: 1, maxLength: 255 }),
      type: str('Attribute type: string, number or binary.', { enum: ['string', 'number', 'binary'] }),
    },
    { required: ['name', 'type'], 'x-kubernetes-validations': [immutable('the key')] },
  );

export const tableSpecSchema: JSONSchemaProps = obj(
  'Desired state of the table.',
  {
    providerConfigRef: providerConfigRefSchema,
    name: externalNameSchema('Must satisfy the target cloud\'s table naming rules (3-50 letters and digits, starting with a letter, is safe on every cloud).'),
    partitionKey: keyAttribute('Partition (hash) key. Immutable: the cloud cannot change a key schema in place. On Bigtable it is the row key; on Azure the PartitionKey.'),
    sortKey: keyAttribute('Optional sort (range) key. Immutable, and cannot be added or removed after creation. On Azure the RowKey.'),
    billing: obj(
      'How the table is billed: onDemand (pay per request) or provisioned (fixed read and write capacity).',
      {
        mode: str('onDemand or provisioned.', { enum: ['onDemand', 'provisioned'], default: 'onDemand' }),
        readCapacity: int('Provisioned read capacity units.', { minimum: 1, maximum: 40000 }),
        writeCapacity: int('Provisioned write capacity units.', { minimum: 1, maximum: 40000 }),
      },
      {
        'x-kubernetes-validations': [
          {
            rule: "self.mode == 'provisioned' ? (has(self.readCapacity) && has(self.writeCapacity)) : (!has(self.readCapacity) && !has(self.writeCapacity))",
            message: 'billing.readCapacity and billing.writeCapacity are required with mode provisioned and not allowed with mode onDemand',
          },
        ],
      },
    ),
    ttlAttribute: str('Attribute holding an expiry time (epoch seconds); items expire after it. Empty disables TTL.', { minLength: 1, maxLength: 255 }),
    pointInTimeRecovery: bool('Continuous backups with point-in-time restore.', { default: false }),
    deletionProtection: bool('Ask the cloud to refuse deletion of the table while set.', { default: false }),
    labels: labelsSchema,
    deletionPolicy: deletionPolicySchema,
    managementPolicy: managementPolicySchema,
    writeOutputsTo: writeOutputsToSchema,
    driftPolicy: driftPolicySchema,
  },
  {
    required: ['partitionKey'],
    'x-kubernetes-validations': [
      notRemovable('name', 'spec.name'),
      { rule: 'has(self.sortKey) == has(oldSelf.sortKey)', message: 'spec.sortKey cannot be added or removed after creation' },
      { rule: '!has(self.sortKey) || self.sortKey.name != self.partitionKey.name', message: 'spec.sortKey.name must differ from spec.partitionKey.name' },
      {
        rule: '!has(self.ttlAttribute) || (self.ttlAttribute != self.partitionKey.name && (!has(self.sortKey) || self.ttlAttribute != self.sortKey.name))',
        message: 'spec.ttlAttribute cannot be a key attribute',
      },
    ],
  },
);

export const tableSchema: JSONSchemaProps = obj(
  'A Table is a portable key-value table: a DynamoDB table (AWS), a Bigtable table (GCP) or a Table Storage table (Azure), chosen by its ProviderConfig.',
  {
    apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
    kind: str('Kind is a string value representing the REST resource this object represents.'),
    metadata: { type: 'object', description: 'Standard object metadata.' },
    spec: tableSpecSchema,
    status: managedStatusSchema,
  },
  { required: ['spec'] },
);

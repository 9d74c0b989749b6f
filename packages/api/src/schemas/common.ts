import { arr, bool, immutable, int, map, obj, str, type JSONSchemaProps } from './json-schema.js';

/** RFC 1123 subdomain (a Kubernetes object name). */
export const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
/** RFC 1123 label (a ConfigMap name is a subdomain, but label is safer across tools). */
export const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

export const providerConfigRefSchema = obj(
  'ProviderConfig (cluster-scoped) holding the cloud, region or account and credentials to use. Defaulted from the namespace annotation k8or.io/provider-config, else the ProviderConfig named "default".',
  {
    name: str('Name of the ProviderConfig.', { minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN }),
  },
  { required: ['name'] },
);

export const externalNameSchema = (kindRules: string): JSONSchemaProps =>
  str(
    `Name of the resource in the cloud (the external name). Defaulted from the namespace and object name when empty; immutable once set, since renaming would mean a new cloud resource. ${kindRules}`,
    { minLength: 1, maxLength: 255, 'x-kubernetes-validations': [immutable('name')] },
  );

export const labelsSchema = map(
  'Labels written to the cloud resource as tags (AWS, Azure) or labels (GCP), next to k8or\'s own owner tags. Keys and values must satisfy the strictest target cloud: keys start with a lowercase letter and use lowercase letters, digits, "_" and "-"; at most 63 characters each.',
  str('Label value.', { maxLength: 63, pattern: '^[a-z0-9_-]*$' }),
  {
    maxProperties: 40,
    'x-kubernetes-validations': [
      {
        rule: "self.all(k, k.size() <= 63 && k.matches('^[a-z][a-z0-9_-]*$') && !k.startsWith('k8or'))",
        message: 'label keys must be 1-63 characters of lowercase letters, digits, "_" or "-", start with a letter, and not start with "k8or" (reserved for owner tags)',
      },
    ],
  },
);

export const deletionPolicySchema = str(
  'What happens to the cloud resource when this object is deleted: Delete removes it, Retain leaves it in the cloud. Defaulted from the annotation k8or.io/deletion-policy on the object, then on its namespace, then the operator\'s default.',
  { enum: ['Delete', 'Retain'] },
);

export const managementPolicySchema = str(
  'Manage (default) creates, updates and deletes the cloud resource. ObserveOnly only reads it and reports status and drift, never writing to the cloud: the safe way to import an existing resource.',
  { enum: ['Manage', 'ObserveOnly'], default: 'Manage' },
);

export const writeOutputsToSchema = obj(
  'A ConfigMap in the same namespace that k8or keeps filled with the external name, location, URL and ID, for applications to consume. Owned by this object and deleted with it.',
  { name: str('Name of the ConfigMap.', { minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN }) },
  { required: ['name'] },
);

const driftModeSchema = (description: string): JSONSchemaProps => str(description, { enum: ['Repair', 'Report', 'Hold'] });

export const driftPolicySchema = obj(
  'What a drift check (a resync) does with a setting changed in the cloud behind k8or\'s back. Repair (the default) writes the spec\'s value back, with an Event (reason RepairedDrift) naming each field, the value found and the value written. Report shows the difference in status.drift, the DRIFT column and a Warning Event (reason DriftReported) and never writes it. Hold shows it with Synced False (reason DriftHeld) and the digest of the held difference in status.heldDriftDigest, and writes the spec\'s value back only once the object is annotated k8or.io/approve-drift=<that digest> (k8or approve KIND/NAME does it); a difference that changed since the approval needs a new one, and an approval is used up by its repair. A change to the spec itself (a new generation) is always applied, and drift that would lower a protection the cloud has on (deletion protection, versioning) is never repaired by a resync, whatever the mode.',
  {
    default: driftModeSchema('Mode for every setting no entry of fields names: Repair (default), Report or Hold.'),
    fields: arr(
      'Per-setting modes. An entry applies to the spec path it names and everything under it (spec.labels covers spec.labels.team); the longest matching path wins.',
      obj(
        'The mode for one spec path.',
        {
          path: str('Spec path of a cloud setting of this kind, such as spec.labels.team or spec.versioning for a Bucket, spec.pointInTimeRecovery for a Table; a list (spec.lifecycle) is named as a whole. The webhook refuses a path that names no setting of the kind.', {
            minLength: 6,
            maxLength: 256,
            pattern: '^spec\\.[A-Za-z0-9_.-]+$',
          }),
          mode: driftModeSchema('What a resync does with drift on this path and under it: Repair, Report or Hold (see driftPolicy).'),
        },
        { required: ['path', 'mode'] },
      ),
      { maxItems: 64, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['path'] },
    ),
  },
);

const conditionSchema = obj(
  'A condition in metav1.Condition shape.',
  {
    type: str('Type of condition: Ready, Synced, Reconciling or Stalled.', { maxLength: 316 }),
    status: str('True, False or Unknown.', { enum: ['True', 'False', 'Unknown'] }),
    reason: str('Machine-readable CamelCase reason for the last transition.', { maxLength: 1024 }),
    message: str('Human-readable detail of the last transition.', { maxLength: 32768 }),
    lastTransitionTime: str('When the condition last changed status.', { format: 'date-time' }),
    observedGeneration: int('The .metadata.generation the condition was set from.', { minimum: 0 }),
  },
  { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
);

export const conditionsSchema = arr('Current state of the resource: Ready (the cloud resource exists and is usable) and Synced (the last reconcile succeeded); Reconciling (working toward the spec) and Stalled (waiting for a user) only while True, as kstatus reads them.', conditionSchema, {
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
});

export const managedStatusSchema = obj('Observed state, written by the operator.', {
  conditions: conditionsSchema,
  observedGeneration: int('The .metadata.generation the operator last reconciled.', { minimum: 0 }),
  provider: str('The cloud the resource lives in: aws, gcp or azure.'),
  atProvider: obj('What the provider last observed in the cloud.', {
    id: str('Cloud identifier: ARN (AWS), resource path (GCP) or resource URL (Azure).'),
    url: str('Endpoint URL of the resource.'),
    location: str('Region or location where the resource lives.'),
    createdTime: str('When the cloud resource was created.', { format: 'date-time' }),
    state: str('Cloud-side lifecycle state, such as ACTIVE or CREATING.'),
    itemCount: int('Approximate number of items (tables; refreshed by the cloud periodically).', { minimum: 0 }),
    etag: str('Entity tag of the resource\'s current state (Azure containers).'),
    lastModified: str('When the resource or its settings last changed in the cloud (Azure containers).', { format: 'date-time' }),
  }),
  drift: arr(
    'Each setting where the cloud differs from the spec, as last observed: under ObserveOnly (reported, never changed), a protection the cloud has and k8or does not lower on its own (ProtectionHeld), or a change sent and not in effect yet (ChangesPending). Absent when they match.',
    obj(
      'One differing setting.',
      {
        field: str('Spec path of the setting, such as spec.versioning or spec.lifecycle.', { maxLength: 1024 }),
        desired: { description: 'The value the spec asks for (absent when the spec leaves it unset).', 'x-kubernetes-preserve-unknown-fields': true },
        actual: { description: 'The value found in the cloud (absent when unset there).', 'x-kubernetes-preserve-unknown-fields': true },
        mode: str(
          'What k8or does with it: Repair (written back now), Report (shown, never written), Hold (written back once approved), Protected (a protection k8or does not lower on its own). Absent for a change of the spec on its way.',
          { enum: ['Repair', 'Report', 'Hold', 'Protected'] },
        ),
      },
      { required: ['field'] },
    ),
    { maxItems: 100 },
  ),
  driftCount: int('How many settings differ between the cloud and the spec (the entries of drift): the DRIFT column.', { minimum: 0 }),
  heldDriftDigest: str(
    'Digest of the drift held under driftPolicy Hold. Annotate the object with k8or.io/approve-drift=<this digest> (or run k8or approve KIND/NAME) to have exactly that difference repaired. Absent when nothing is held.',
    { maxLength: 128 },
  ),
  driftCheckInterval: str(
    'How often the operator checks the cloud for drift, as a Go duration (1h, 30s): the k8or.io/resync-period annotation, else the operator\'s --resync-period, never below its --min-resync-period. k8or reconcile KIND/NAME checks at once.',
    { maxLength: 64 },
  ),
  appliedSpecDigest: str(
    'Digest of the spec, without driftPolicy, the cloud was last brought in line with: a change of spec.driftPolicy alone applies nothing, and drift stays under the policy.',
    { maxLength: 128 },
  ),
  appliedProtection: map(
    "For each protection the cloud reports (spec.deletionProtection, say), a digest of the spec's value at that field when the cloud was last brought in line. A protection set outside k8or is lowered only when the spec's value there changed since: an edit of another field asks nothing of it.",
    str('A digest of one field value.', { maxLength: 128 }),
    { maxProperties: 32 },
  ),
  lastHandledReconcileAt: str('The value of the k8or.io/reconcile-requested-at annotation the operator last handled.', { maxLength: 256 }),
  target: map(
    'Where the cloud resource lives (provider, account, region, project, storage account, instance, endpoint), recorded when k8or created the resource or proved it its own. If the ProviderConfig later resolves elsewhere, the operator stops with a condition rather than create a second resource. Never holds credentials.',
    str('One part of the target.', { maxLength: 1024 }),
    { maxProperties: 32 },
  ),
  identity: map(
    "The cloud's own identity of the resource (a DynamoDB TableId, a GCS bucket's creation time and project number, an S3 bucket's creation date), recorded when k8or created the resource or proved it its own. A resource found later under the name with another identity was replaced by someone else: the operator stops and never writes to it.",
    str('One part of the identity.', { maxLength: 1024 }),
    { maxProperties: 32 },
  ),
});

export const forceDeleteSchema = bool(
  'Delete the bucket even when it still holds objects (all objects and versions are deleted first). Without it, deleting a non-empty bucket stops with a condition and nothing is lost.',
  { default: false },
);

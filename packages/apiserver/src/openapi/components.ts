// Component schemas (OpenAPI v3 form, refs as #/components/schemas/NAME) for the apimachinery types and the
// built-in kinds the sandbox serves: enough for `kubectl explain` and `kubectl apply` to know them.
// Descriptions follow the upstream ones, shortened.

export type JsonSchema = Record<string, unknown>;

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
/** A described reference, as kube-openapi v3 writes it (allOf keeps siblings of $ref legal). */
const described = (name: string, description: string, extra: JsonSchema = {}): JsonSchema => ({ allOf: [ref(name)], description, ...extra });
const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
const int = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'integer', format: 'int32', description, ...extra });
const int64 = (description: string): JsonSchema => ({ type: 'integer', format: 'int64', description });
const bool = (description: string): JsonSchema => ({ type: 'boolean', description });
const strings = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'array',
  description,
  items: { type: 'string', default: '' },
  ...extra,
});
const stringMap = (description: string, format?: string): JsonSchema => ({
  type: 'object',
  description,
  additionalProperties: format ? { type: 'string', format } : { type: 'string', default: '' },
});
const arrayOf = (name: string, description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'array',
  description,
  items: { allOf: [ref(name)], default: {} },
  ...extra,
});

export const API_VERSION_DESCRIPTION =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
export const KIND_DESCRIPTION =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
export const METADATA_DESCRIPTION =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DESCRIPTION =
  'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

export const OBJECT_META = `${META}.ObjectMeta`;
export const LIST_META = `${META}.ListMeta`;
export const PATCH = `${META}.Patch`;
export const STATUS = `${META}.Status`;
export const DELETE_OPTIONS = `${META}.DeleteOptions`;
export const WATCH_EVENT = `${META}.WatchEvent`;

/** Common fields of a kind: apiVersion, kind, metadata. */
export function objectFields(): Record<string, JsonSchema> {
  return {
    apiVersion: str(API_VERSION_DESCRIPTION),
    kind: str(KIND_DESCRIPTION),
    metadata: described(OBJECT_META, METADATA_DESCRIPTION, { default: {} }),
  };
}

/** The `XList` schema for a kind. */
export function listSchema(itemModel: string, kind: string, gvk: { group: string; version: string }): JsonSchema {
  return {
    description: `${kind}List is a list of ${kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: str(API_VERSION_DESCRIPTION),
      items: arrayOf(itemModel, `List of ${kind.toLowerCase()}s.`),
      kind: str(KIND_DESCRIPTION),
      metadata: described(LIST_META, LIST_METADATA_DESCRIPTION, { default: {} }),
    },
    'x-kubernetes-group-version-kind': [{ group: gvk.group, kind: `${kind}List`, version: gvk.version }],
  };
}

const labelSelector = `${META}.LabelSelector`;
const microTime = `${META}.MicroTime`;
const time = `${META}.Time`;

/** apimachinery meta/v1 schemas. */
export const META_SCHEMAS: Record<string, JsonSchema> = {
  [time]: {
    description: 'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.',
    type: 'string',
    format: 'date-time',
  },
  [microTime]: { description: 'MicroTime is version of Time with microsecond level precision.', type: 'string', format: 'date-time' },
  [`${META}.FieldsV1`]: {
    description: 'FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.',
    type: 'object',
  },
  [`${META}.ManagedFieldsEntry`]: {
    description:
      'ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.',
    type: 'object',
    properties: {
      apiVersion: str('APIVersion defines the version of this resource that this field set applies to.'),
      fieldsType: str('FieldsType is the discriminator for the different fields format and version. There is currently only one possible value: "FieldsV1"'),
      fieldsV1: described(`${META}.FieldsV1`, 'FieldsV1 holds the first JSON version format as described in the "FieldsV1" type.'),
      manager: str('Manager is an identifier of the workflow managing these fields.'),
      operation: str("Operation is the type of operation which lead to this ManagedFieldsEntry being created. The only valid values for this field are 'Apply' and 'Update'."),
      subresource: str('Subresource is the name of the subresource used to update that object, or empty string if the object was updated through the main resource.'),
      time: described(time, 'Time is the timestamp of when the ManagedFields entry was added.'),
    },
  },
  [`${META}.OwnerReference`]: {
    description: 'OwnerReference contains enough information to let you identify an owning object.',
    type: 'object',
    required: ['apiVersion', 'kind', 'name', 'uid'],
    properties: {
      apiVersion: str('API version of the referent.', { default: '' }),
      blockOwnerDeletion: bool('If true, AND if the owner has the "foregroundDeletion" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed.'),
      controller: bool('If true, this reference points to the managing controller.'),
      kind: str('Kind of the referent.', { default: '' }),
      name: str('Name of the referent.', { default: '' }),
      uid: str('UID of the referent.', { default: '' }),
    },
    'x-kubernetes-map-type': 'atomic',
  },
  [OBJECT_META]: {
    description: 'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
    type: 'object',
    properties: {
      annotations: stringMap('Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata. They are not queryable and should be preserved when modifying objects. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations'),
      creationTimestamp: described(time, 'CreationTimestamp is a timestamp representing the server time when this object was created. Populated by the system. Read-only.'),
      deletionGracePeriodSeconds: int64('Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Only set when deletionTimestamp is also set. Read-only.'),
      deletionTimestamp: described(time, 'DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. This field is set by the server when a graceful deletion is requested by the user, and is not directly settable by a client. Read-only.'),
      finalizers: strings('Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list.', {
        'x-kubernetes-list-type': 'set',
        'x-kubernetes-patch-strategy': 'merge',
      }),
      generateName: str('GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided.'),
      generation: int64('A sequence number representing a specific generation of the desired state. Populated by the system. Read-only.'),
      labels: stringMap('Map of string keys and values that can be used to organize and categorize (scope and select) objects. May match selectors of replication controllers and services. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels'),
      managedFields: arrayOf(`${META}.ManagedFieldsEntry`, "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow. This is mostly for internal housekeeping, and users typically shouldn't need to set or understand this field.", {
        'x-kubernetes-list-type': 'atomic',
      }),
      name: str('Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names'),
      namespace: str('Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the "default" namespace, but "default" is the canonical representation. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces'),
      ownerReferences: arrayOf(`${META}.OwnerReference`, 'List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected.', {
        'x-kubernetes-list-map-keys': ['uid'],
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-patch-merge-key': 'uid',
        'x-kubernetes-patch-strategy': 'merge',
      }),
      resourceVersion: str('An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. Populated by the system. Read-only. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#concurrency-control-and-consistency'),
      selfLink: str('Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.'),
      uid: str('UID is the unique in time and space value for this object. It is typically generated by the server on successful creation of a resource and is not allowed to change on PUT operations. Populated by the system. Read-only. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#uids'),
    },
  },
  [LIST_META]: {
    description: 'ListMeta describes metadata that synthetic resources must have, including lists and various status objects.',
    type: 'object',
    properties: {
      continue: str('continue may be set if the user set a limit on the number of items returned, and indicates that the server has more data available.'),
      remainingItemCount: int64('remainingItemCount is the number of subsequent items in the list which are not included in this list response.'),
      resourceVersion: str("String that identifies the server's internal version of this object that can be used by clients to determine when objects have changed."),
      selfLink: str('Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.'),
    },
  },
  [`${META}.LabelSelectorRequirement`]: {
    description: 'A label selector requirement is a selector that contains values, a key, and an operator that relates the key and values.',
    type: 'object',
    required: ['key', 'operator'],
    properties: {
      key: str('key is the label key that the selector applies to.', { default: '' }),
      operator: str("operator represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists and DoesNotExist.", { default: '' }),
      values: strings('values is an array of string values. If the operator is In or NotIn, the values array must be non-empty. If the operator is Exists or DoesNotExist, the values array must be empty.', { 'x-kubernetes-list-type': 'atomic' }),
    },
  },
  [labelSelector]: {
    description: 'A label selector is a label query over a set of resources. An empty label selector matches all objects. A null label selector matches no objects.',
    type: 'object',
    properties: {
      matchExpressions: arrayOf(`${META}.LabelSelectorRequirement`, 'matchExpressions is a list of label selector requirements. The requirements are ANDed.', { 'x-kubernetes-list-type': 'atomic' }),
      matchLabels: stringMap('matchLabels is a map of {key,value} pairs.'),
    },
    'x-kubernetes-map-type': 'atomic',
  },
  [PATCH]: { description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.', type: 'object' },
  [`${META}.StatusCause`]: {
    description: 'StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.',
    type: 'object',
    properties: {
      field: str('The field of the resource that has caused this error, as named by its JSON serialization.'),
      message: str('A human-readable description of the cause of the error.'),
      reason: str('A machine-readable description of the cause of the error. If this value is empty there is no information available.'),
    },
  },
  [`${META}.StatusDetails`]: {
    description: 'StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response.',
    type: 'object',
    properties: {
      causes: arrayOf(`${META}.StatusCause`, 'The Causes array includes more details associated with the StatusReason failure.', { 'x-kubernetes-list-type': 'atomic' }),
      group: str('The group attribute of the resource associated with the status StatusReason.'),
      kind: str('The kind attribute of the resource associated with the status StatusReason.'),
      name: str('The name attribute of the resource associated with the status StatusReason (when there is a single name which can be described).'),
      retryAfterSeconds: int('If specified, the time in seconds before the operation should be retried.'),
      uid: str('UID of the resource.'),
    },
  },
  [STATUS]: {
    description: 'Status is a return value for calls that don\'t return other objects.',
    type: 'object',
    properties: {
      apiVersion: str(API_VERSION_DESCRIPTION),
      code: int('Suggested HTTP return code for this status, 0 if not set.'),
      details: described(`${META}.StatusDetails`, 'Extended data associated with the reason.'),
      kind: str(KIND_DESCRIPTION),
      message: str('A human-readable description of the status of this operation.'),
      metadata: described(LIST_META, LIST_METADATA_DESCRIPTION, { default: {} }),
      reason: str('A machine-readable description of why this operation is in the "Failure" status.'),
      status: str('Status of the operation. One of: "Success" or "Failure".'),
    },
    'x-kubernetes-group-version-kind': [{ group: '', kind: 'Status', version: 'v1' }],
  },
  [`${META}.Preconditions`]: {
    description: 'Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.',
    type: 'object',
    properties: {
      resourceVersion: str('Specifies the target ResourceVersion'),
      uid: str('Specifies the target UID.'),
    },
  },
  [DELETE_OPTIONS]: {
    description: 'DeleteOptions may be provided when deleting an API object.',
    type: 'object',
    properties: {
      apiVersion: str(API_VERSION_DESCRIPTION),
      dryRun: strings('When present, indicates that modifications should not be persisted.', { 'x-kubernetes-list-type': 'atomic' }),
      gracePeriodSeconds: int64('The duration in seconds before the object should be deleted.'),
      kind: str(KIND_DESCRIPTION),
      preconditions: described(`${META}.Preconditions`, 'Must be fulfilled before a deletion is carried out.'),
      propagationPolicy: str("Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background', 'Foreground'."),
    },
  },
  [WATCH_EVENT]: {
    description: 'Event represents a single event to a watched resource.',
    type: 'object',
    required: ['type', 'object'],
    properties: {
      object: { type: 'object', description: 'Object is: * If Type is Added or Modified: the new state of the object. * If Type is Deleted: the state of the object immediately before deletion. * If Type is Error: *Status is recommended; other types may make sense depending on context.' },
      type: str('', { default: '' }),
    },
  },
};

const CORE = 'io.k8s.api.core.v1';
const objectReference = `${CORE}.ObjectReference`;

/** A built-in kind's schema, keyed by its model name. */
interface BuiltinKind {
  group: string;
  version: string;
  kind: string;
  model: string;
  schema: JsonSchema;
  /** Extra component schemas it references. */
  components?: Record<string, JsonSchema>;
}

const withObject = (description: string, properties: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema => ({
  description,
  type: 'object',
  properties: { ...objectFields(), ...properties },
  ...extra,
});

const webhookCommon = (kind: 'validating' | 'mutating'): Record<string, JsonSchema> => ({
  admissionReviewVersions: strings('AdmissionReviewVersions is an ordered list of preferred `AdmissionReview` versions the Webhook expects.', { 'x-kubernetes-list-type': 'atomic' }),
  clientConfig: described('io.k8s.api.admissionregistration.v1.WebhookClientConfig', 'ClientConfig defines how to communicate with the hook. Required', { default: {} }),
  failurePolicy: str('FailurePolicy defines how unrecognized errors from the admission endpoint are handled - allowed values are Ignore or Fail. Defaults to Fail.'),
  matchPolicy: str('matchPolicy defines how the "rules" list is used to match incoming requests. Allowed values are "Exact" or "Equivalent". Defaults to "Equivalent"'),
  name: str(`The name of the admission webhook. Name should be fully qualified, e.g., imagepolicy.kubernetes.io. Required.`, { default: '' }),
  namespaceSelector: described(labelSelector, 'NamespaceSelector decides whether to run the webhook on an object based on whether the namespace for that object matches the selector.'),
  objectSelector: described(labelSelector, 'ObjectSelector decides whether to run the webhook based on if the object has matching labels.'),
  rules: arrayOf('io.k8s.api.admissionregistration.v1.RuleWithOperations', `Rules describes what operations on what resources/subresources the webhook cares about. The webhook cares about an operation if it matches _any_ Rule.`, { 'x-kubernetes-list-type': 'atomic' }),
  sideEffects: str('SideEffects states whether this webhook has side effects. Acceptable values are: None, NoneOnDryRun (webhooks created via v1beta1 may also specify Some or Unknown).', { default: '' }),
  timeoutSeconds: int('TimeoutSeconds specifies the timeout for this webhook. After the timeout passes, the webhook call will be ignored or the API call will fail based on the failure policy. The timeout value must be between 1 and 30 seconds. Default to 10 seconds.'),
  ...(kind === 'mutating'
    ? { reinvocationPolicy: str('reinvocationPolicy indicates whether this webhook should be called multiple times as part of a single admission evaluation. Allowed values are "Never" and "IfNeeded".') }
    : {}),
});

const ADMISSION = 'io.k8s.api.admissionregistration.v1';
/** Webhooks merge by name under strategic merge patch, as the Go types declare. */
const WEBHOOK_LIST: JsonSchema = {
  'x-kubernetes-list-map-keys': ['name'],
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-patch-merge-key': 'name',
  'x-kubernetes-patch-strategy': 'merge',
};
const admissionComponents: Record<string, JsonSchema> = {
  [`${ADMISSION}.ServiceReference`]: {
    description: 'ServiceReference holds a reference to Service.legacy.k8s.io',
    type: 'object',
    required: ['namespace', 'name'],
    properties: {
      name: str('`name` is the name of the service. Required', { default: '' }),
      namespace: str('`namespace` is the namespace of the service. Required', { default: '' }),
      path: str('`path` is an optional URL path which will be sent in any request to this service.'),
      port: int('If specified, the port on the service that hosting webhook. Default to 443 for backward compatibility.'),
    },
  },
  [`${ADMISSION}.WebhookClientConfig`]: {
    description: 'WebhookClientConfig contains the information to make a TLS connection with the webhook',
    type: 'object',
    properties: {
      caBundle: str('`caBundle` is a PEM encoded CA bundle which will be used to validate the webhook\'s server certificate.', { format: 'byte' }),
      service: described(`${ADMISSION}.ServiceReference`, '`service` is a reference to the service for this webhook. Either `service` or `url` must be specified.'),
      url: str('`url` gives the location of the webhook, in standard URL form (`scheme://host:port/path`). Exactly one of `url` or `service` must be specified.'),
    },
  },
  [`${ADMISSION}.RuleWithOperations`]: {
    description: 'RuleWithOperations is a tuple of Operations and Resources.',
    type: 'object',
    properties: {
      apiGroups: strings('APIGroups is the API groups the resources belong to. \'*\' is all groups.', { 'x-kubernetes-list-type': 'atomic' }),
      apiVersions: strings("APIVersions is the API versions the resources belong to. '*' is all versions.", { 'x-kubernetes-list-type': 'atomic' }),
      operations: strings("Operations is the operations the admission hook cares about - CREATE, UPDATE, DELETE, CONNECT or * for all of those operations and any future admission operations that are added.", { 'x-kubernetes-list-type': 'atomic' }),
      resources: strings("Resources is a list of resources this rule applies to. For example: 'pods' means pods. 'pods/log' means the log subresource of pods. '*' means all resources.", { 'x-kubernetes-list-type': 'atomic' }),
      scope: str('scope specifies the scope of this rule. Valid values are "Cluster", "Namespaced", and "*".'),
    },
  },
  [`${ADMISSION}.ValidatingWebhook`]: {
    description: 'ValidatingWebhook describes an admission webhook and the resources and operations it applies to.',
    type: 'object',
    required: ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions'],
    properties: webhookCommon('validating'),
  },
  [`${ADMISSION}.MutatingWebhook`]: {
    description: 'MutatingWebhook describes an admission webhook and the resources and operations it applies to.',
    type: 'object',
    required: ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions'],
    properties: webhookCommon('mutating'),
  },
};

const coreEventComponents: Record<string, JsonSchema> = {
  [objectReference]: {
    description: 'ObjectReference contains enough information to let you inspect or modify the referred object.',
    type: 'object',
    properties: {
      apiVersion: str('API version of the referent.'),
      fieldPath: str('If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.'),
      kind: str('Kind of the referent.'),
      name: str('Name of the referent.'),
      namespace: str('Namespace of the referent.'),
      resourceVersion: str('Specific resourceVersion to which this reference is made, if any.'),
      uid: str('UID of the referent.'),
    },
    'x-kubernetes-map-type': 'atomic',
  },
  [`${CORE}.EventSource`]: {
    description: 'EventSource contains information for an event.',
    type: 'object',
    properties: { component: str('Component from which the event is generated.'), host: str('Node name on which the event is generated.') },
  },
  [`${CORE}.EventSeries`]: {
    description: 'EventSeries contain information on series of events, i.e. thing that was/is happening continuously for some time.',
    type: 'object',
    properties: {
      count: int('Number of occurrences in this series up to the last heartbeat time'),
      lastObservedTime: described(microTime, 'Time of the last occurrence observed'),
    },
  },
};

const crdSpec = {
  type: 'object',
  description: 'spec describes how the user wants the resources to appear',
  'x-kubernetes-preserve-unknown-fields': true,
};

/** The built-in kinds, by apiVersion/kind. */
export const BUILTIN_KINDS: BuiltinKind[] = [
  {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    model: `${CORE}.Namespace`,
    schema: withObject('Namespace provides a scope for Names. Use of multiple namespaces is optional.', {
      spec: {
        description: 'Spec defines the behavior of the Namespace.',
        type: 'object',
        properties: { finalizers: strings('Finalizers is an opaque list of values that must be empty to permanently remove object from storage.', { 'x-kubernetes-list-type': 'atomic' }) },
      },
      status: {
        description: 'Status describes the current status of a Namespace.',
        type: 'object',
        properties: { phase: str('Phase is the current lifecycle phase of the namespace.', { enum: ['Active', 'Terminating'] }) },
      },
    }),
  },
  {
    group: '',
    version: 'v1',
    kind: 'Secret',
    model: `${CORE}.Secret`,
    schema: withObject('Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.', {
      data: stringMap('Data contains the secret data. Each key must consist of alphanumeric characters, \'-\', \'_\' or \'.\'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here.', 'byte'),
      immutable: bool('Immutable, if set to true, ensures that data stored in the Secret cannot be updated (only object metadata can be modified).'),
      stringData: stringMap('stringData allows specifying non-binary secret data in string form. It is provided as a write-only input field for convenience. All keys and values are merged into the data field on write, overwriting any existing values.'),
      type: str('Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types'),
    }),
  },
  {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    model: `${CORE}.ConfigMap`,
    schema: withObject('ConfigMap holds configuration data for pods to consume.', {
      binaryData: stringMap('BinaryData contains the binary data. Each key must consist of alphanumeric characters, \'-\', \'_\' or \'.\'.', 'byte'),
      data: stringMap('Data contains the configuration data. Each key must consist of alphanumeric characters, \'-\', \'_\' or \'.\'.'),
      immutable: bool('Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated (only object metadata can be modified).'),
    }),
  },
  {
    group: '',
    version: 'v1',
    kind: 'Event',
    model: `${CORE}.Event`,
    components: coreEventComponents,
    schema: withObject(
      'Event is a report of an event somewhere in the cluster.',
      {
        action: str('What action was taken/failed regarding to the Regarding object.'),
        count: int('The number of times this event has occurred.'),
        eventTime: described(microTime, 'Time when this Event was first observed.'),
        firstTimestamp: described(time, 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)'),
        involvedObject: described(objectReference, 'The object that this event is about.', { default: {} }),
        lastTimestamp: described(time, 'The time at which the most recent occurrence of this event was recorded.'),
        message: str('A human-readable description of the status of this operation.'),
        reason: str("This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
        related: described(objectReference, 'Optional secondary object for more complex actions.'),
        reportingComponent: str('Name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.', { default: '' }),
        reportingInstance: str('ID of the controller instance, e.g. `kubelet-xyzf`.', { default: '' }),
        series: described(`${CORE}.EventSeries`, 'Data about the Event series this event represents or nil if it\'s a singleton Event.'),
        source: described(`${CORE}.EventSource`, 'The component reporting this event. Should be a short machine understandable string.', { default: {} }),
        type: str('Type of this event (Normal, Warning), new types could be added in the future'),
      },
      { required: ['metadata', 'involvedObject'] },
    ),
  },
  {
    group: 'events.k8s.io',
    version: 'v1',
    kind: 'Event',
    model: 'io.k8s.api.events.v1.Event',
    components: {
      [objectReference]: coreEventComponents[objectReference]!,
      [`${CORE}.EventSource`]: coreEventComponents[`${CORE}.EventSource`]!,
      'io.k8s.api.events.v1.EventSeries': {
        description: 'EventSeries contain information on series of events, i.e. thing that was/is happening continuously for some time.',
        type: 'object',
        required: ['count', 'lastObservedTime'],
        properties: {
          count: int('count is the number of occurrences in this series up to the last heartbeat time.', { default: 0 }),
          lastObservedTime: described(microTime, 'lastObservedTime is the time when last Event from the series was seen before last heartbeat.'),
        },
      },
    },
    schema: withObject(
      'Event is a report of an event somewhere in the cluster. It generally denotes some state change in the system.',
      {
        action: str('action is what action was taken/failed regarding to the regarding object. It is machine-readable.'),
        deprecatedCount: int('deprecatedCount is the deprecated field assuring backward compatibility with core.v1 Event type.'),
        deprecatedFirstTimestamp: described(time, 'deprecatedFirstTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type.'),
        deprecatedLastTimestamp: described(time, 'deprecatedLastTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type.'),
        deprecatedSource: described(`${CORE}.EventSource`, 'deprecatedSource is the deprecated field assuring backward compatibility with core.v1 Event type.'),
        eventTime: described(microTime, 'eventTime is the time when this Event was first observed. It is required.'),
        note: str('note is a human-readable description of the status of this operation. Maximal length of the note is 1kB, but libraries should be prepared to handle values up to 64kB.'),
        reason: str('reason is why the action was taken. It is human-readable.'),
        regarding: described(objectReference, 'regarding contains the object this Event is about.', { default: {} }),
        related: described(objectReference, 'related is the optional secondary object for more complex actions.'),
        reportingController: str('reportingController is the name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.'),
        reportingInstance: str('reportingInstance is the ID of the controller instance, e.g. `kubelet-xyzf`.'),
        series: described('io.k8s.api.events.v1.EventSeries', "series is data about the Event series this event represents or nil if it's a singleton Event."),
        type: str('type is the type of this event (Normal, Warning), new types could be added in the future.'),
      },
      { required: ['eventTime'] },
    ),
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    model: 'io.k8s.api.coordination.v1.Lease',
    components: {
      'io.k8s.api.coordination.v1.LeaseSpec': {
        description: 'LeaseSpec is a specification of a Lease.',
        type: 'object',
        properties: {
          acquireTime: described(microTime, 'acquireTime is a time when the current lease was acquired.'),
          holderIdentity: str('holderIdentity contains the identity of the holder of a current lease.'),
          leaseDurationSeconds: int('leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it. This is measured against the time of last observed renewTime.'),
          leaseTransitions: int('leaseTransitions is the number of transitions of a lease between holders.'),
          preferredHolder: str('PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up.'),
          renewTime: described(microTime, 'renewTime is a time when the current holder of a lease has last updated the lease.'),
          strategy: str('Strategy indicates the strategy for picking the leader for coordinated leader election.'),
        },
      },
    },
    schema: withObject('Lease defines a lease concept.', {
      spec: described('io.k8s.api.coordination.v1.LeaseSpec', 'spec contains the specification of the Lease. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status', { default: {} }),
    }),
  },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    model: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
    schema: withObject(
      'CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name MUST be in the format <.spec.name>.<.spec.group>.',
      {
        spec: crdSpec,
        status: { type: 'object', description: 'status indicates the actual state of the CustomResourceDefinition', 'x-kubernetes-preserve-unknown-fields': true },
      },
      { required: ['spec'] },
    ),
  },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'ValidatingWebhookConfiguration',
    model: `${ADMISSION}.ValidatingWebhookConfiguration`,
    components: admissionComponents,
    schema: withObject('ValidatingWebhookConfiguration describes the configuration of and admission webhook that accept or reject and object without changing it.', {
      webhooks: arrayOf(`${ADMISSION}.ValidatingWebhook`, 'Webhooks is a list of webhooks and the affected resources and operations.', WEBHOOK_LIST),
    }),
  },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'MutatingWebhookConfiguration',
    model: `${ADMISSION}.MutatingWebhookConfiguration`,
    components: admissionComponents,
    schema: withObject('MutatingWebhookConfiguration describes the configuration of and admission webhook that accept or reject and may change the object.', {
      webhooks: arrayOf(`${ADMISSION}.MutatingWebhook`, 'Webhooks is a list of webhooks and the affected resources and operations.', WEBHOOK_LIST),
    }),
  },
];

/**
 * Reasons, shown in conditions and Events alike, so what a user reads in
 * `kubectl describe` is stable and greppable. Grouped by outcome.
 */
export const Reasons = {
  // Ready
  /** The cloud resource exists and is usable. */
  Available: 'Available',
  /** Created or being created; not yet usable. */
  Creating: 'Creating',
  /** Delete requested; waiting for the cloud to confirm it is gone. */
  Deleting: 'Deleting',
  /** ObserveOnly found nothing under the external name. */
  ExternalResourceNotFound: 'ExternalResourceNotFound',
  /** Exists but not usable (a cloud-side state other than ready). */
  Unavailable: 'Unavailable',

  // Synced: success
  ReconcileSuccess: 'ReconcileSuccess',
  /** ObserveOnly: the cloud matches the spec. */
  Observed: 'Observed',

  // Synced: stop states a user resolves
  Paused: 'Paused',
  /** The resource under the name exists and nothing proves it this object's, or another owner's tags name it. */
  NotOwned: 'NotOwned',
  /** The identity recorded at creation differs from the resource found: someone replaced it. */
  ExternalResourceReplaced: 'ExternalResourceReplaced',
  /** The ProviderConfig now points at another cloud target than the one the resource was created in. */
  TargetChanged: 'TargetChanged',
  /** An older object names the same cloud resource (target, kind, external name); this one never calls the cloud. */
  DuplicateCloudResource: 'DuplicateCloudResource',
  /** The cloud is more protected than the spec asks; k8or does not lower a protection on a resync. */
  ProtectionHeld: 'ProtectionHeld',
  /** The update was sent but the cloud does not show all of it yet (an operation still running); looked at again within seconds. */
  ChangesPending: 'ChangesPending',
  DeletionBlocked: 'DeletionBlocked',
  /**
   * Deletion policy Delete on credentials that can give the resource no identity on a kind without
   * tags (an Azure table through an account SAS): its delete could never be proven, so nothing is created.
   */
  IdentityUnavailable: 'IdentityUnavailable',
  /** ObserveOnly: the cloud differs from the spec (reported, never repaired). */
  DriftDetected: 'DriftDetected',
  /** A resync found drift the driftPolicy holds for approval (mode Hold): not repaired until approved. */
  DriftHeld: 'DriftHeld',
  /** A resync found drift the driftPolicy only reports (mode Report): never repaired by a resync. */
  DriftReported: 'DriftReported',
  /** The ProviderConfig's spec.driftCheckBudget checks this resource less often than it asks for. */
  DriftCheckIntervalLengthened: 'DriftCheckIntervalLengthened',
  ProviderConfigNotFound: 'ProviderConfigNotFound',
  ProviderNotInstalled: 'ProviderNotInstalled',
  KindNotSupported: 'KindNotSupported',
  CredentialsSecretNotFound: 'CredentialsSecretNotFound',
  ImmutableFieldChanged: 'ImmutableFieldChanged',
  /** The ProviderConfig's spec.settings break the provider's declared schema. */
  InvalidProviderSettings: 'InvalidProviderSettings',
  /** The cloud resource is there but some managed settings could not be applied or read (named in the message). */
  SettingsNotApplied: 'SettingsNotApplied',

  // Synced: errors from a call
  CannotConnectToProvider: 'CannotConnectToProvider',
  CannotObserveExternalResource: 'CannotObserveExternalResource',
  CannotCreateExternalResource: 'CannotCreateExternalResource',
  CannotUpdateExternalResource: 'CannotUpdateExternalResource',
  CannotDeleteExternalResource: 'CannotDeleteExternalResource',
  CannotWriteOutputs: 'CannotWriteOutputs',

  // Events for actions taken
  CreatedExternalResource: 'CreatedExternalResource',
  /** After a crash mid-create: the resource found under the persisted name is proven ours (owner tags, or the recorded identity). */
  RecoveredExternalResource: 'RecoveredExternalResource',
  /** A create with an unknown outcome, under a name k8or generated for this object, was finished: tags and settings written. */
  FinishedInterruptedCreate: 'FinishedInterruptedCreate',
  AdoptedExternalResource: 'AdoptedExternalResource',
  UpdatedExternalResource: 'UpdatedExternalResource',
  /** A resync found the cloud changed behind k8or's back and put it back. */
  RepairedDrift: 'RepairedDrift',
  /** Drift held under driftPolicy Hold was repaired after its approval (k8or.io/approve-drift). */
  RepairedApprovedDrift: 'RepairedApprovedDrift',
  DeletedExternalResource: 'DeletedExternalResource',
  RetainedExternalResource: 'RetainedExternalResource',
} as const;

export type Reason = (typeof Reasons)[keyof typeof Reasons];

/** Messages for the stop states, so the same words reach conditions and events. */
export const Messages = {
  paused: 'Reconciling is paused by the k8or.io/paused annotation; remove it to resume.',
  notOwned: (externalName: string) =>
    `A cloud resource named "${externalName}" exists but is not owned by this object (its owner tags are missing or name another owner). ` +
    'k8or will not update or delete it. Set the annotation k8or.io/adopt: "true" to take it over, or choose another spec.name.',
  // The provider's message says what to do (forceDelete for a bucket, deletionProtection for a table).
  deletionBlocked: (detail: string) => `Deletion is blocked: ${detail}`,
  providerConfigNotFound: (name: string) => `ProviderConfig "${name}" not found; create it or set spec.providerConfigRef.`,
  providerNotInstalled: (provider: string) => `No provider package for "${provider}" is loaded in the operator.`,
  kindNotSupported: (provider: string, kind: string) => `Provider "${provider}" does not manage ${kind} resources.`,
  secretNotFound: (namespace: string, name: string) =>
    `Credentials Secret ${namespace}/${name} named by the ProviderConfig not found.`,
  invalidSettings: (providerConfig: string, problems: string) => `ProviderConfig "${providerConfig}" has invalid settings: ${problems}`,
  settingsNotApplied: (problems: string) => `The cloud resource exists, but these settings are not in effect: ${problems}`,
  targetChanged: (recorded: string, now: string) =>
    `The cloud resource was created in ${recorded}, but the ProviderConfig now points at ${now}. k8or will not create a second resource there. ` +
    'Point the ProviderConfig (or spec.providerConfigRef) back at the original target; to move the data, create a new object for the new target.',
  duplicate: (kind: string, other: string, externalName: string) =>
    `${kind} ${other} already names the cloud resource "${externalName}" in the same target, and comes first (it holds that resource, or is older); only it manages that resource, and this object makes no cloud call. ` +
    'Choose another spec.name, or delete this object.',
  protectionHeld: (fields: string) =>
    `The cloud is more protected than the spec in ${fields}; k8or does not lower a protection on its own. ` +
    'Set the spec to match, or change the spec (a new generation) to ask for the lower setting.',
  driftHeld: (fields: string, kind: string, name: string, digest: string) =>
    `The cloud differs from the spec in ${fields}; driftPolicy Hold keeps it until approved. ` +
    `To repair exactly this difference, run k8or approve ${kind.toLowerCase()}/${name} (or annotate k8or.io/approve-drift=${digest}).`,
  driftCheckIntervalLengthened: (kind: string, interval: string, asked: string, providerConfig: string, budget: string, resources: number, onShard = false) =>
    `This ${kind} is checked for drift every ${interval}, not every ${asked} as it asks: ProviderConfig "${providerConfig}" allows its drift checks ${budget}, ` +
    `shared by its ${resources} resources${onShard ? ' on this shard' : ''}. Raise spec.driftCheckBudget, or ask for a longer k8or.io/resync-period, to change it.`,
  driftReported: (fields: string) => `The cloud differs from the spec in ${fields}; driftPolicy Report shows it and k8or does not change it.`,
  changesPending: (fields: string, seconds: number) => `The update was sent, but the cloud does not show it yet in ${fields}; looking again in ${seconds} s.`,
  ownerTagsNotReadYet: (name: string) =>
    `A resource named "${name}" exists but is not usable yet, so its owner tags cannot be read to prove it is the one k8or created; k8or writes nothing until they can be read.`,
  protectedFromDeletion: (fields: string) =>
    `the cloud resource is protected from deletion by ${fields}; k8or never removes a protection on delete, and a spec edit is not applied to an object being deleted. ` +
    'Turn the protection off on the cloud resource itself and k8or deletes it at its next try, or set the deletion policy Retain (annotation k8or.io/deletion-policy: Retain) to let the object go and keep the resource.',
} as const;

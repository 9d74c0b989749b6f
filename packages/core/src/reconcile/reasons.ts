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
  NotOwned: 'NotOwned',
  DeletionBlocked: 'DeletionBlocked',
  /** ObserveOnly: the cloud differs from the spec (reported, never repaired). */
  DriftDetected: 'DriftDetected',
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
  /** After a crash mid-create: the resource found under the persisted name carries our owner tags. */
  RecoveredExternalResource: 'RecoveredExternalResource',
  /** A create cut short (between the create call and its tags or its marker) was finished: tags and settings written. */
  FinishedInterruptedCreate: 'FinishedInterruptedCreate',
  AdoptedExternalResource: 'AdoptedExternalResource',
  UpdatedExternalResource: 'UpdatedExternalResource',
  /** A resync found the cloud changed behind k8or's back and put it back. */
  RepairedDrift: 'RepairedDrift',
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
} as const;

import { Annotations, FINALIZER } from '@k8or/api';
import type { Problem, TraceReport, TracedCondition } from './report.js';

/** Cloud error codes and words that say the cloud refused who we are, not what we asked. */
const REFUSAL = /AccessDenied|Forbidden|InvalidAccessKeyId|SignatureDoesNotMatch|UnrecognizedClient|InvalidClientTokenId|ExpiredToken|AuthenticationFailed|AuthorizationFailure|AuthorizationPermission|InvalidAuthenticationInfo|PERMISSION_DENIED|UNAUTHENTICATED|\b40[13]\b|unauthori[sz]ed|invalid[_ ]grant|credential/i;

/** True when a failed cloud call was a refusal of the credentials or their permissions. */
export function isCredentialRefusal(code: string | undefined, message: string | undefined): boolean {
  return REFUSAL.test(`${code ?? ''} ${message ?? ''}`);
}

/** The object as kubectl names it: `bucket/NAME -n NS`. */
const ref = (object: TraceReport['object']): string => `${object.kind.toLowerCase()}/${object.name}${object.namespace ? ` -n ${object.namespace}` : ''}`;

const show = (target: Readonly<Record<string, string>>): string =>
  Object.entries(target)
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');

/**
 * Every problem the facts show, each with the one thing to do about it. The live facts speak
 * first; a condition adds what they do not already say (a reason the live read cannot see, or
 * the engine's own words when the read was skipped).
 */
export function problemsOf(report: Omit<TraceReport, 'problems'>): Problem[] {
  const problems: Problem[] = [];
  const add = (problem: Problem): void => {
    if (!problems.some((p) => p.code === problem.code)) problems.push(problem);
  };
  const { object, providerConfig: pc, credentials, cloud } = report;
  const secret = credentials?.secret;
  const secretName = secret ? `${secret.namespace}/${secret.name}` : undefined;
  const observeOnly = object.managementPolicy === 'ObserveOnly';

  if (object.annotations[Annotations.paused] === 'true') add({ code: 'paused', what: 'reconciling is paused', todo: `remove the annotation ${Annotations.paused} to resume` });

  if (pc && !pc.found) {
    add({ code: 'providerconfig-missing', what: `ProviderConfig "${pc.name}" not found`, todo: `create ProviderConfig "${pc.name}", or set spec.providerConfigRef to an existing one` });
  }
  if (pc?.found && pc.installed === false) {
    add({ code: 'provider-not-installed', what: `no installed provider serves "${pc.provider ?? '?'}"`, todo: `install the provider package for "${pc.provider ?? '?'}" beside the operator and the webhook (and this CLI)` });
  }
  if (secret && !secret.found) {
    add({ code: 'credentials-missing', what: `credentials Secret ${secretName} not found`, todo: `create Secret ${secretName} with the keys provider ${pc?.provider ?? ''} needs, or point the ProviderConfig's spec.credentials.secretRef at the right one` });
  }
  if (credentials && credentials.source === 'Secret' && !secret) {
    add({ code: 'credentials-missing', what: 'the ProviderConfig takes credentials from a Secret but names none', todo: 'set spec.credentials.secretRef (namespace and name) on the ProviderConfig' });
  }
  if (pc?.targetMatches === false && pc.recordedTarget && pc.target) {
    add({
      code: 'target-changed',
      what: `ProviderConfig "${pc.name}" now points elsewhere (target pinned): the resource was created in ${show(pc.recordedTarget)}, the ProviderConfig now points at ${show(pc.target)}`,
      todo: `move ProviderConfig "${pc.name}" back to ${show(pc.recordedTarget)}; to use the new target, create a new object for it`,
    });
  }

  if (cloud?.skippedBecause === 'kind-not-supported') {
    add({ code: 'kind-not-supported', what: cloud.why ?? '', todo: `use a ProviderConfig whose provider manages ${object.kind}s (spec.providerConfigRef)` });
  }
  if (cloud?.skippedBecause === 'invalid-providerconfig') {
    add({ code: 'invalid-settings', what: cloud.why ?? '', todo: `fix ProviderConfig "${pc?.name ?? ''}" as the message says (its spec.rateLimits or spec.settings)` });
  }
  if (cloud?.read === 'failed') {
    if (isCredentialRefusal(cloud.errorCode, cloud.why)) {
      const where = secret ? `Secret ${secretName}${secret.keys?.length ? ` keys ${secret.keys.join(', ')}` : ''}` : `the operator's ${credentials?.source ?? 'ambient'} identity`;
      add({ code: 'credentials-refused', what: `credentials refused by the cloud${cloud.errorCode ? ` (${cloud.errorCode})` : ''}: ${cloud.why ?? ''}`, todo: `check ${where}: the right account, not rotated away, allowed to read and manage ${object.kind}s` });
    } else {
      add({ code: 'cloud-unreadable', what: `the cloud resource could not be read: ${cloud.why ?? ''}`, todo: `check that ${pc?.target?.endpoint || 'the cloud endpoint'} answers from here and from the operator; k8or retries with backoff meanwhile` });
    }
  }
  if (cloud?.read === 'done') {
    const name = cloud.externalName ?? '';
    const verdict = cloud.ownership?.verdict;
    if (!observeOnly && verdict === 'unproven') {
      add({ code: 'not-owned', what: `not ours: "${name}" exists and nothing proves it this object's`, todo: `add ${Annotations.adopt}=true if you mean to adopt it; otherwise choose another spec.name` });
    }
    if (!observeOnly && verdict === 'foreign') {
      const tags = cloud.ownerTags ?? {};
      const owner = ['k8or.io/cluster', 'k8or.io/namespace', 'k8or.io/name'].map((k) => tags[k] ?? '?').join('/');
      add({ code: 'owned-by-another', what: `"${name}" belongs to another k8or object (${tags['k8or.io/kind'] ?? ''} ${owner})`, todo: `choose another spec.name; to hand the resource over, delete its owner object with ${Annotations.deletionPolicy}=Retain first (adopt never overrides a live owner)` });
    }
    if (!observeOnly && verdict === 'replaced') {
      add({
        code: 'replaced',
        what: `"${name}" is not the resource k8or created: its identity was ${show(cloud.identity?.recorded ?? {})}, now ${show(cloud.identity?.found ?? {})}`,
        todo: `find out who re-created "${name}"; to manage the new one, delete this object with ${Annotations.deletionPolicy}=Retain and create it again with ${Annotations.adopt}=true`,
      });
    }
    if (!cloud.exists && observeOnly) add({ code: 'missing', what: `"${name}" does not exist in the cloud (ObserveOnly: k8or only reports it)`, todo: 'create it in the cloud, or set spec.managementPolicy: Manage to let k8or create it' });
    if (!cloud.exists && !observeOnly && object.creation === 'created' && !object.deleting) {
      add({ code: 'missing', what: `"${name}" was created by k8or but is gone from the cloud`, todo: 'nothing to undo: k8or creates it again at its next check; to hurry it, edit the object (any change)' });
    }
    // A field k8or holds on purpose (ProtectionHeld, listed in status.drift) is that condition's problem, not drift to repair.
    const held = report.conditions.some((c) => c.reason === 'ProtectionHeld') ? new Set((report.drift ?? []).map((d) => d.field)) : new Set<string>();
    const drift = (cloud.diff ?? []).filter((d) => !held.has(d.field));
    if (cloud.exists && drift.length) {
      const fields = drift.map((d) => `${d.field} (cloud ${JSON.stringify(d.actual)}, spec ${JSON.stringify(d.desired)})`).join(', ');
      const every = report.schedule ? ` (every ${report.schedule.period})` : '';
      add(
        observeOnly
          ? { code: 'drift', what: `the cloud differs from the spec in ${fields}; ObserveOnly only reports it`, todo: 'change the spec to match the cloud, or set the cloud back by hand' }
          : object.annotations[Annotations.paused] === 'true'
            ? { code: 'drift', what: `the cloud differs from the spec in ${fields}`, todo: `remove the annotation ${Annotations.paused}: k8or then sets the cloud back` }
            : { code: 'drift', what: `the cloud differs from the spec in ${fields}`, todo: `nothing, if the spec is right: k8or sets the cloud back at its next check${every}; to do it now, change any annotation (kubectl annotate ${ref(object)} touched-at="$(date +%s)" --overwrite)` },
      );
    }
    if (cloud.immutableDiff?.length) {
      const fields = cloud.immutableDiff.map((d) => `${d.field} (cloud ${JSON.stringify(d.actual)}, spec ${JSON.stringify(d.desired)})`).join(', ');
      add({ code: 'immutable-change', what: `the cloud cannot change ${fields} in place`, todo: 'set the spec back to what the cloud has; for the new setting, create a new object under another spec.name' });
    }
  }

  // Whose the resource is was just decided from the live facts; a condition says what it was at the last check.
  const liveOwnership = cloud?.read === 'done' && cloud.ownership !== undefined;
  for (const condition of report.conditions) {
    if (condition.status === 'True') continue;
    if (liveOwnership && (condition.reason === 'NotOwned' || condition.reason === 'ExternalResourceReplaced')) continue;
    const problem = fromCondition(condition, report);
    if (problem) add(problem);
  }

  if (object.deleting && object.deleting.finalizers.includes(FINALIZER) && problems.length === 0) {
    add({ code: 'deleting', what: `being deleted since ${object.deleting.since}; the finalizer ${FINALIZER} is still held`, todo: 'wait for the next check; if it stays, check that the operator is running (its logs and the Events below)' });
  }
  if (report.outputs && !report.outputs.found && report.conditions.some((c) => c.type === 'Ready' && c.status === 'True')) {
    add({ code: 'outputs-missing', what: `outputs ConfigMap ${report.outputs.configMap} not found`, todo: 'k8or writes it at its next check; if it stays missing, look for CannotWriteOutputs in the Events' });
  }
  return problems;
}

/** A condition's reason, when the facts above have not said it: the engine's words and what to do. */
function fromCondition(condition: TracedCondition, report: Omit<TraceReport, 'problems'>): Problem | undefined {
  const message = condition.message ?? '';
  const what = `${condition.type}=${condition.status} ${condition.reason ?? ''}: ${message}`.trim();
  const pc = report.providerConfig?.name ?? '';
  const secret = report.credentials?.secret;
  switch (condition.reason) {
    case undefined:
    case 'Creating':
    case 'Deleting':
    case 'Paused':
    case 'Observed':
      return undefined;
    case 'NotOwned':
      return { code: 'not-owned', what: `not ours: ${message}`, todo: `add ${Annotations.adopt}=true if you mean to adopt it; otherwise choose another spec.name` };
    case 'ExternalResourceReplaced':
      return { code: 'replaced', what, todo: `find out who re-created it; to manage the new one, delete this object with ${Annotations.deletionPolicy}=Retain and create it again with ${Annotations.adopt}=true` };
    case 'TargetChanged':
      return { code: 'target-changed', what: `ProviderConfig now points elsewhere (target pinned): ${message}`, todo: `move ProviderConfig "${pc}" back to where the resource was created; to use the new target, create a new object for it` };
    case 'DuplicateCloudResource':
      return { code: 'duplicate', what, todo: 'choose another spec.name for this object, or delete it' };
    case 'ProtectionHeld':
      return { code: 'protection-held', what, todo: 'set the spec to match the cloud, or change the spec (a new generation) to ask for the lower setting' };
    case 'ChangesPending':
      return { code: 'changes-pending', what, todo: 'wait: k8or looks again shortly; if it lasts, check the cloud for a setting it does not accept' };
    case 'DeletionBlocked': {
      const target = ref(report.object);
      const retain = `to keep the resource in the cloud instead, kubectl annotate ${target} ${Annotations.deletionPolicy}=Retain --overwrite`;
      // A protection the cloud itself holds: as read live, else as the engine's or the provider's message says it.
      const live = (report.cloud?.protection ?? []).filter((p) => p.enabled && p.blocksDeletion).map((p) => p.field);
      const heldByCloud = live.length > 0 || /protected from deletion|never (turns|removes|lowers) a protection|protection on\b/i.test(message);
      const specAsks = report.object.deletionProtection === true && (live.length === 0 || live.includes('spec.deletionProtection'));
      const todo = heldByCloud
        ? specAsks
          ? // The engine lowers a protection only for a new generation of a live object; once the object is being
            // deleted it goes straight to the delete, so a spec edit now never reaches the cloud.
            `spec.deletionProtection: true asked for it, and k8or never lowers a protection while deleting (setting the spec to false now does not reach the cloud): turn deletion protection off on the cloud resource yourself, and k8or deletes it at its next try; ${retain}`
          : `the protection${live.length ? ` (${live.join(', ')})` : ''} was set outside k8or: turn it off on the cloud resource (k8or never lowers one to delete), and k8or deletes it at its next try; ${retain}`
        : /on its own record alone/.test(message)
          ? // Nothing on the resource (no tags, no identity) tells k8or's own from one made again under the name.
            `nothing proves the resource under the name is still the one k8or created, so k8or never deletes it: ${retain} (then delete it yourself if it is yours), or delete it in the cloud yourself and the object goes`
          : /spec\.deletionProtection: true/.test(message)
          ? // No protection in the cloud (an Azure table): k8or enforces the spec's own, read at each delete try.
            `set spec.deletionProtection: false (kubectl patch ${target} --type merge -p '{"spec":{"deletionProtection":false}}'); k8or then deletes it, or keep it with the deletion policy Retain`
          : /not empty|NotEmpty/i.test(message)
            ? `set spec.forceDelete: true (kubectl patch ${target} --type merge -p '{"spec":{"forceDelete":true}}') to delete its contents with it, or empty it yourself`
            : /protect/i.test(message)
              ? `turn the protection off on the cloud resource (k8or never lowers one to delete), and k8or deletes it at its next try; ${retain}`
              : 'resolve what the message names; k8or tries the delete again every minute';
      return { code: 'deletion-blocked', what: `deletion blocked: ${message.replace(/^Deletion is blocked: /, '')}`, todo };
    }
    case 'IdentityUnavailable': {
      const target = ref(report.object);
      return {
        code: 'identity-unavailable',
        what,
        todo: `k8or creates nothing here under deletion policy Delete: kubectl patch ${target} --type merge -p '{"spec":{"deletionPolicy":"Retain"}}' to have it created and left in the cloud on delete, or give ProviderConfig "${pc}" credentials that can set the identity (an account key)`,
      };
    }
    case 'ProviderConfigNotFound':
      return { code: 'providerconfig-missing', what, todo: `create ProviderConfig "${pc}", or set spec.providerConfigRef to an existing one` };
    case 'ProviderNotInstalled':
      return { code: 'provider-not-installed', what, todo: 'install the provider package beside the operator and the webhook' };
    case 'KindNotSupported':
      return { code: 'kind-not-supported', what, todo: `use a ProviderConfig whose provider manages ${report.object.kind}s` };
    case 'CredentialsSecretNotFound':
      return { code: 'credentials-missing', what, todo: `create Secret ${secret ? `${secret.namespace}/${secret.name}` : 'named by the ProviderConfig'}` };
    case 'ImmutableFieldChanged':
      return { code: 'immutable-change', what, todo: 'set the spec back to what the cloud has; for the new setting, create a new object under another spec.name' };
    case 'InvalidProviderSettings':
      return { code: 'invalid-settings', what, todo: `fix spec.settings (or spec.rateLimits) of ProviderConfig "${pc}" as the message says` };
    case 'SettingsNotApplied':
      return { code: 'settings-not-applied', what, todo: 'change the spec to settings this cloud supports, or set them in the cloud by hand' };
    case 'CannotWriteOutputs':
      return { code: 'outputs-not-written', what, todo: `check the ConfigMap ${report.outputs?.configMap ?? 'in spec.writeOutputsTo'}: another owner holds it, or the operator may not write ConfigMaps there` };
    default:
      if (isCredentialRefusal(undefined, message)) {
        return { code: 'credentials-refused', what: `credentials refused: ${message}`, todo: `check ${secret ? `Secret ${secret.namespace}/${secret.name}${secret.keys?.length ? ` keys ${secret.keys.join(', ')}` : ''}` : "the operator's identity"}: the right account, not rotated away, allowed to manage ${report.object.kind}s` };
      }
      return { code: `condition-${condition.reason.toLowerCase()}`, what, todo: 'fix the cause the message names; k8or retries with backoff and clears the condition itself' };
  }
}

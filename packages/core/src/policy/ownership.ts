import { Annotations, MANAGED_BY, OwnerTags, shortHash } from '@k8or/api';
import type { ResourceIdentity } from '../provider/contract.js';
import { creationStateOf } from './creation.js';
import { annotationIsTrue, field, isPlainObject, stringField } from './read.js';

/** The owner tags k8or writes on (and expects to find on) the cloud resource of this object. */
export function ownerTagsFor(resource: unknown, clusterId: string): Record<string, string> {
  return {
    [OwnerTags.managedBy]: MANAGED_BY,
    [OwnerTags.cluster]: clusterId,
    [OwnerTags.namespace]: stringField(resource, 'metadata', 'namespace') ?? '',
    [OwnerTags.name]: stringField(resource, 'metadata', 'name') ?? '',
    [OwnerTags.kind]: stringField(resource, 'kind') ?? '',
  };
}

/**
 * The per-object random part of a name k8or generates: a short hash of the
 * object's uid (random per object, never reused). A default external name that
 * carries it cannot have been chosen by anyone else, so it proves ownership
 * where tags cannot (see `nameProvesOwnership`). Naming rules fold it in when
 * `DefaultNameInput.uid` is given.
 */
export function perObjectNameToken(uid: string): string {
  return shortHash('k8or-object', uid);
}

/** True when the external name carries this object's per-object token (a name k8or generated for this very object). */
export function nameProvesOwnership(resource: unknown, externalName: string): boolean {
  const uid = stringField(resource, 'metadata', 'uid');
  return uid !== undefined && externalName.includes(perObjectNameToken(uid));
}

/** What the cloud reported about an existing resource: Observation's (or Presence's) `ownerTags` and `identity`. */
export interface OwnershipFacts {
  ownerTags?: Readonly<Record<string, string>> | undefined;
  identity?: ResourceIdentity | undefined;
}

/**
 * Whose an existing cloud resource is, decided from evidence only:
 *
 * - `ours`: every owner tag of this object is there (written atomically by our
 *   create), or the identity recorded in `status.identity` at creation matches
 *   the one found; for a kind whose cloud has neither tags nor an identity,
 *   the create-succeeded record itself. Manage it; on that record alone it is never deleted
 *   (`decideDeletion`).
 * - `finish-create`: a create's outcome is unknown (create-pending, no
 *   create-failed), no tags say either way, and the name is one k8or generated
 *   for this object (`nameProvesOwnership`). Finish it: update writes the tags.
 * - `adopt`: not provably ours, nothing names another live owner, and
 *   `k8or.io/adopt: "true"` asks to take it over.
 * - `replaced`: the identity recorded at creation differs from the one found:
 *   someone deleted ours and made another under the name. Never written or
 *   deleted; `k8or.io/adopt` does not override it.
 * - `foreign`: owner tags name another live owner (`k8or.io/managed-by: k8or`
 *   with another cluster, namespace, name or kind). Never written or deleted;
 *   `k8or.io/adopt` never overrides it (the owner releases it first: Retain).
 * - `unproven`: nothing proves it ours. A missing tag proves nothing, a
 *   create-pending or create-succeeded marker neither: a resource someone
 *   else made after our create failed, or after ours was deleted, looks the
 *   same. Never written or deleted; the condition says how to adopt it.
 */
export type Ownership = 'ours' | 'finish-create' | 'adopt' | 'replaced' | 'foreign' | 'unproven';

/** A verdict with the evidence it rests on and, when the engine must stop, the words for the condition. */
export interface OwnershipDecision {
  ownership: Ownership;
  /** What proved it ours (`ours`, `finish-create`). */
  proof?: 'owner-tags' | 'identity' | 'generated-name' | 'create-record' | 'adoption';
  /** For `replaced`, `foreign` and `unproven`: what was found and how a user resolves it. */
  message?: string;
}

/** The verdicts under which the engine may write to (and, with a Delete policy, delete) the resource. */
export function mayManage(ownership: Ownership): boolean {
  return ownership === 'ours' || ownership === 'finish-create' || ownership === 'adopt';
}

/** True when the resource carries every owner tag of the object: the first evidence `decideOwnership` looks for. */
export function ownerTagsMatch(found: OwnershipFacts, expected: Readonly<Record<string, string>>): boolean {
  const tags = found.ownerTags;
  return tags !== undefined && Object.entries(expected).every(([key, value]) => tags[key] === value);
}

/**
 * The one ownership decision of k8or: the engine (reconcile and delete), the
 * webhook, `k8or plan` and `k8or import` all ask it. `found` is what observe or
 * probe reported of an existing resource; `expected` is `ownerTagsFor` the object.
 */
export function decideOwnership(resource: unknown, found: OwnershipFacts, expected: Readonly<Record<string, string>>, externalName?: string): OwnershipDecision {
  const tags = found.ownerTags;
  const name = externalName ?? stringField(resource, 'spec', 'name') ?? '';
  const entries = Object.entries(expected);
  if (ownerTagsMatch(found, expected)) return { ownership: 'ours', proof: 'owner-tags' };
  // A live owner says so with managed-by; other k8or tags without it are left over from a release.
  if (tags !== undefined && tags[OwnerTags.managedBy] === MANAGED_BY && entries.some(([key, value]) => tags[key] !== undefined && tags[key] !== value)) {
    return { ownership: 'foreign', message: Messages.foreign(name, describeOwner(tags)) };
  }

  const recorded = recordedIdentity(resource);
  const identity = compareIdentity(recorded, found.identity);
  if (identity === 'same') return { ownership: 'ours', proof: 'identity' };
  if (identity === 'different') return { ownership: 'replaced', message: Messages.replaced(name, recorded ?? {}, found.identity ?? {}) };

  const state = creationStateOf(resource);
  // Where no identity was recorded, a name k8or generated for this very object proves it: for an
  // unknown create outcome, and for a created resource of a kind without tags (its identity may
  // not have reached status before a crash).
  const nameMayProve = recorded === undefined && (state === 'pending' || (state === 'created' && tags === undefined));
  if (nameMayProve && nameProvesOwnership(resource, name)) {
    return state === 'pending' ? { ownership: 'finish-create', proof: 'generated-name' } : { ownership: 'ours', proof: 'generated-name' };
  }
  // A kind whose cloud offers neither tags nor an identity (an Azure table, a Bigtable table): the
  // record of our own successful create is all the evidence there can be, and nothing contradicts it.
  // Where the user asked to adopt it (the annotation still set), the user's word stands with that record.
  if (state === 'created' && tags === undefined && found.identity === undefined && recorded === undefined) {
    return { ownership: 'ours', proof: annotationIsTrue(resource, Annotations.adopt) ? 'adoption' : 'create-record' };
  }
  if (annotationIsTrue(resource, Annotations.adopt)) return { ownership: 'adopt' };
  if (recorded !== undefined && found.identity === undefined) return { ownership: 'unproven', message: Messages.identityNotFound(name, recorded, tags !== undefined) };
  return { ownership: 'unproven', message: Messages.unproven(name, state === 'pending', tags !== undefined) };
}

/**
 * What a delete under deletion policy Delete does with the resource found under the name:
 *
 * - `delete`: evidence proves it the object's (owner tags, the identity recorded at creation, a
 *   name k8or generated for this very object), or the user vouched for it (`k8or.io/adopt`, still set).
 * - `block`: it is the object's only by k8or's record of its own create (a kind whose cloud keeps
 *   no tags for it, created through credentials that could give it no identity: an Azure table
 *   through an account SAS). Nothing on it tells it from one someone else made again under the
 *   name after deleting ours, so k8or never deletes it: the object stays with DeletionBlocked and
 *   `message` says what the user can do.
 * - `leave`: not proven the object's: the object goes, the resource stays (`message` says why).
 */
export type DeletionVerdict = { action: 'delete' } | { action: 'block'; message: string } | { action: 'leave'; message?: string };

export function decideDeletion(decision: OwnershipDecision, kind: string, name: string): DeletionVerdict {
  if (!mayManage(decision.ownership) || decision.ownership === 'adopt') return { action: 'leave', ...(decision.message ? { message: decision.message } : {}) };
  if (decision.proof === 'create-record') return { action: 'block', message: Messages.deleteUnproven(kind, name) };
  return { action: 'delete' };
}

/** The rule id a refused deletion policy names (condition messages, docs). */
export const DELETE_NEEDS_EVIDENCE_RULE = 'deletion-policy.needs-evidence';

/**
 * Before a create under deletion policy Delete: the words of the refusal when the client says the
 * resource it would make can hold no identity (`ExternalClient.identityUnavailable`), else
 * undefined. Such a resource could never be deleted (`decideDeletion` blocks it), so k8or makes
 * none that the object's delete is meant to remove; with Retain it is made, and let go on delete.
 */
export function refuseCreate(deletionPolicy: string, kind: string, identityUnavailable: string | undefined): string | undefined {
  if (deletionPolicy !== 'Delete' || identityUnavailable === undefined) return undefined;
  return Messages.deleteNeedsEvidence(kind, identityUnavailable);
}

/**
 * True when an `unproven` verdict may only be early: k8or sent a create (its outcome unknown, or
 * just succeeded), and the resource under the name is not usable yet, so its owner tags were not read (a DynamoDB table
 * still CREATING has tags, but lists them only once ACTIVE). The engine then writes nothing and
 * looks again soon, instead of stopping for a user to adopt.
 */
export function ownerTagsNotReadYet(resource: unknown, found: OwnershipFacts & { ready?: boolean }): boolean {
  const state = creationStateOf(resource);
  return (state === 'pending' || state === 'created') && found.ownerTags === undefined && found.ready === false;
}

/** `decideOwnership`'s verdict alone. */
export function ownershipOf(resource: unknown, found: OwnershipFacts, expected: Readonly<Record<string, string>>, externalName?: string): Ownership {
  return decideOwnership(resource, found, expected, externalName).ownership;
}

/** `status.identity` of the object, when one was recorded. */
export function recordedIdentity(resource: unknown): Record<string, string> | undefined {
  const value = field(resource, 'status', 'identity');
  if (!isPlainObject(value)) return undefined;
  const entries = Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string');
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

/**
 * `same` when the identities share at least one key and agree on every shared
 * one; `different` when a shared key differs; `unknown` when either is missing
 * or they share no key (a provider that reports more, or other, keys than it
 * did proves nothing either way).
 */
export function compareIdentity(recorded: ResourceIdentity | undefined, found: ResourceIdentity | undefined): 'same' | 'different' | 'unknown' {
  if (!recorded || !found) return 'unknown';
  const shared = Object.keys(recorded).filter((key) => Object.hasOwn(found, key));
  if (shared.length === 0) return 'unknown';
  return shared.every((key) => recorded[key] === found[key]) ? 'same' : 'different';
}

function describeOwner(tags: Readonly<Record<string, string>>): string {
  const where = [tags[OwnerTags.kind], [tags[OwnerTags.namespace], tags[OwnerTags.name]].filter(Boolean).join('/')].filter(Boolean).join(' ');
  const cluster = tags[OwnerTags.cluster];
  return `${where || 'another object'}${cluster ? ` of cluster "${cluster}"` : ''}`;
}

const describeIdentity = (identity: Readonly<Record<string, string>>): string =>
  Object.entries(identity)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ') || 'none';

const ADOPT = `${Annotations.adopt}: "true"`;
const RETAIN = `spec.deletionPolicy: Retain (or the annotation ${Annotations.deletionPolicy}: Retain, which wins over the spec)`;

/** What a user reads in the condition when the engine stops on ownership. */
const Messages = {
  foreign: (name: string, owner: string) =>
    `A cloud resource named "${name}" exists and its owner tags name ${owner}. k8or will not update or delete it, and ${Annotations.adopt} does not override another owner: ` +
    'that owner must release it first (delete its object with deletion policy Retain), or choose another spec.name.',
  replaced: (name: string, recorded: Readonly<Record<string, string>>, found: Readonly<Record<string, string>>) =>
    `The cloud resource named "${name}" is not the one k8or created: its identity (${describeIdentity(found)}) differs from the one recorded at creation (${describeIdentity(recorded)}), ` +
    `so someone replaced it. k8or will not update or delete it. To manage the new resource, delete this object with deletion policy Retain and create a new one with ${ADOPT}.`,
  unproven: (name: string, pending: boolean, hasTags: boolean) =>
    `A cloud resource named "${name}" exists, and nothing proves it is this object's (${hasTags ? 'no owner tags of this object' : 'this kind has no tags'}, no identity recorded at creation)` +
    `${pending ? '; the create k8or sent for it has an unknown outcome, so it may be someone else\'s' : ''}. ` +
    `k8or will not update or delete it. If it is yours, set the annotation ${ADOPT} to take it over; otherwise choose another spec.name.`,
  identityNotFound: (name: string, recorded: Readonly<Record<string, string>>, hasTags: boolean) =>
    `A cloud resource named "${name}" exists, and nothing proves it is this object's (${hasTags ? 'no owner tags of this object' : 'this kind has no tags'}): ` +
    `the identity recorded at creation (${describeIdentity(recorded)}) is not found on it, so someone may have replaced it, or the ProviderConfig's credentials cannot read it ` +
    '(an Azure account SAS cannot read a table\'s access policies). k8or will not update or delete it. ' +
    `If it is this object's, use credentials that can read its identity (the ProviderConfig it was created with); otherwise delete this object with deletion policy Retain.`,
  deleteUnproven: (kind: string, name: string) =>
    `k8or created ${kind} "${name}" through credentials that could give it no identity, and its cloud keeps no owner tags for it, so nothing on it shows it is still the one k8or created: ` +
    'someone may have deleted it and made another under the name. k8or never deletes a resource on its own record alone. ' +
    `Set ${RETAIN} to let this object go and leave the resource (then delete it yourself if it is yours), or delete the resource yourself and the object goes once it is gone.`,
  deleteNeedsEvidence: (kind: string, why: string) =>
    `spec.deletionPolicy: Delete is refused for this ${kind} (rule ${DELETE_NEEDS_EVIDENCE_RULE}): ${why}, so the resource would carry neither owner tags nor an identity, ` +
    'and k8or could never tell it from one someone else made again under the name; it deletes nothing on such a guess, and creates nothing its delete could not remove. ' +
    `Set ${RETAIN} to have k8or create it and leave it in the cloud on delete, or use credentials that can set the identity (an account key or a connection string with one). Nothing was created.`,
} as const;

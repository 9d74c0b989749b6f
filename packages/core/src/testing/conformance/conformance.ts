import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION, Annotations, ConditionTypes, FINALIZER, MANAGED_BY, OwnerTags, type ManagedKindName, type ManagedResource, type ManagedResourceOf, type ProviderConfig } from '@k8or/api';
import type { CallOptions, CloudCallRecorder, ConnectionContext, Connector, ExternalClient, Observation, Presence, ProviderPlugin } from '../../provider/contract.js';
import { compareIdentity, mayManage, ownerTagsFor, ownerTagsMatch, ownershipOf, type OwnershipFacts } from '../../policy/ownership.js';
import { createOutcomeOf } from '../../policy/creation.js';
import { cloudTargetFor } from '../../policy/cloud-target.js';
import { namingRulesFor } from '../../policy/naming.js';
import { ManagedReconciler } from '../../reconcile/reconciler.js';
import { Reasons } from '../../reconcile/reasons.js';
import { DeletionBlockedError, NotOwnedError, ProviderError, isRetryable } from '../../provider/errors.js';
import { waitFor } from '../wait-for.js';
import { InMemoryEvents, InMemoryLookups, InMemoryObjects, noOutputs } from './in-memory-objects.js';

/** A managed field and how to change it in the cloud behind k8or's back. */
export interface DriftCase {
  /** Spec path the provider must report in its diff, such as `spec.versioning` (a prefix of the reported field). */
  field: string;
  /** Changes the setting of the resource named `externalName` with the backend's own client, not the provider. */
  change(externalName: string): Promise<void>;
}

/**
 * What a provider's test supplies: its local backend, reached with the
 * provider's real SDK. Every hook is plain cloud access; the kit drives the
 * engine itself.
 */
export interface ConformanceBackend<K extends ManagedKindName> {
  /** A ProviderConfig (named anything) that reaches the local backend: endpoint, region, project, account. */
  providerConfig: ProviderConfig;
  /** Secret data the backend accepts, when the ProviderConfig's credentials come from a Secret. */
  credentials?: Record<string, string>;
  /**
   * A valid spec for a new resource, without `name`; use nested values
   * (lifecycle rules, labels, key schemas) so key order is put to the test.
   * The kit sets deletionPolicy Delete.
   */
  spec(): Omit<ManagedResourceOf<K>['spec'], 'name'>;
  /** Every managed field of the kind, each with a way to change it out of band. */
  drift: readonly DriftCase[];
  /**
   * Why the kind has no managed field at all (an Azure table is its name and nothing else), when
   * `drift` is empty; the kit then checks that observe finds nothing to repair on a fresh resource.
   */
  noManagedFields?: string;
  /**
   * Access the backend refuses (403): other credentials (a Secret with wrong
   * keys, another account's keys) or another ProviderConfig (a backend switch).
   */
  deniedAccess(): { credentials?: Record<string, string>; providerConfig?: ProviderConfig };
  /**
   * Access the backend accepts under which a resource the provider makes can hold no evidence of
   * whose it is, no owner tags and no identity (an account SAS for an Azure table). Its clients must
   * say so before any create (`ExternalClient.identityUnavailable`). Leave it out where every
   * credential the provider accepts can set and read its evidence.
   */
  accessWithoutEvidence?(): { credentials?: Record<string, string>; providerConfig?: ProviderConfig };
  /**
   * Makes a resource named `externalName` that someone else owns, out of band.
   * Default: the provider's own create with another cluster's owner tags.
   * Clouds without tags may create it plainly: the kit never marks it created.
   */
  createForeign?(externalName: string): Promise<void>;
  /** Removes what `createForeign` made. Default: the provider's delete. */
  deleteForeign?(externalName: string): Promise<void>;
  /** True for a recorded cloud operation (the name given to `recordCall`) that writes. Default: names that start with a write verb. */
  isWrite?(operation: string): boolean;
  /** How long the cloud may take to settle (a table becoming ACTIVE). Default 60 s. */
  timeoutMs?: number;
  /**
   * Rules of the contract this provider does not meet yet, each with the reason, shown as the
   * skip message of the cases that check it. A case is skipped for exactly the rules named here,
   * never for a capability merely found missing; leave it empty once the provider reports them.
   * See ConformanceOptOut.
   */
  optOut?: Partial<Record<ConformanceOptOut, string>>;
  /**
   * Turns on, out of band (the backend's own client), a protection the kit's spec does not ask
   * for on the resource named `externalName` (DynamoDB DeletionProtectionEnabled, a GCS retention
   * policy, a public access block), and names the ProtectionSetting.field observe reports for it.
   * `undo` turns it off again (and tolerates a resource already gone). Required unless the
   * provider opts out of `protection`.
   */
  protect?(externalName: string): Promise<{ field: string; undo(): Promise<void> }>;
}

/**
 * The contract's newer reporting duties a provider may opt out of, for a time, by name:
 * - `identity`: observe and probe report `identity` (the cloud's own id of the resource).
 * - `protection`: observe and probe report `protection` (deletion protection, public access
 *   block, versioning, retention, as the kind has them).
 * - `release`: the clients have `release` (Retain removes our owner tags).
 */
export type ConformanceOptOut = 'identity' | 'protection' | 'release';

export interface ConformanceOptions<K extends ManagedKindName> {
  plugin: ProviderPlugin;
  kind: K;
  /** Starts (or reaches) the backend; called once before the cases. */
  start(): Promise<ConformanceBackend<K>>;
  /** Stops what `start` started. */
  stop?(): Promise<void>;
}

const WRITE_VERBS = /^(create|put|update|delete|tag|untag|set|patch|insert|enable|disable|modify|restore|apply|upload|remove|add)/i;
const NAMESPACE = 'conformance';
const SECRET = { namespace: 'k8or-system', name: 'conformance-credentials' };

/** One recorded cloud call. */
interface RecordedCall {
  operation: string;
  ok: boolean;
  /** The rate-limited service the provider named for the call. */
  service: string | undefined;
}

/**
 * The provider conformance kit: one call from a provider's own test, against
 * its local backend with the real SDK. Each case is named after the rule of
 * the provider contract it checks, so a failure reads as the broken rule.
 *
 * ```ts
 * runProviderConformance({ plugin: awsProvider, kind: 'Bucket', start: async () => ({ providerConfig, spec, drift, deniedAccess }) });
 * ```
 */
export function runProviderConformance<K extends ManagedKindName>(options: ConformanceOptions<K>): void {
  const { plugin, kind } = options;
  describe(`provider conformance: ${plugin.provider} ${kind}`, () => {
    let kit: Kit<K>;

    before(async () => {
      kit = new Kit(plugin, kind, await options.start());
    });
    after(async () => {
      await kit?.cleanUp();
      await options.stop?.();
    });
    // A case that failed half-way must not leave the next one without access.
    beforeEach(() => kit?.restoreAccess());

    it('create is idempotent: a second create of the same name makes no second resource and harms none', async () => {
      const name = kit.externalName();
      const resource = kit.resource(name);
      const client = await kit.client(resource);
      assert.equal((await client.observe(resource, kit.call())).exists, false, 'a fresh name does not exist');
      await client.create(resource, kit.call());
      const first = await kit.settle(client, resource);
      try {
        await client.create(resource, kit.call());
      } catch (error) {
        // Where the cloud has no tags, "already exists" cannot be proven ours: NotOwnedError is the only answer allowed.
        assert.equal(first.ownerTags, undefined, `a second create of our own tagged resource succeeds, not ${String(error)}`);
        assert.ok(error instanceof NotOwnedError, `a second create may only fail as NotOwnedError: ${String(error)}`);
      }
      const observation = await kit.settle(client, resource);
      assert.equal(observation.exists, true);
      assert.deepEqual(observation.diff ?? [], [], 'the resource is intact');
      kit.assertOurs(observation, resource);
    });

    it('delete is idempotent: deleting twice succeeds, and so does deleting what never existed', async () => {
      const name = kit.externalName();
      const resource = kit.resource(name);
      const client = await kit.client(resource);
      await client.create(resource, kit.call());
      await kit.settle(client, resource);
      await client.delete(resource, kit.call());
      await client.delete(resource, kit.call());
      await waitFor(`${name} gone`, async () => !(await client.observe(resource, kit.call())).exists, kit.timeoutMs);
      const never = kit.resource(kit.externalName());
      await (await kit.client(never)).delete(never, kit.call());
    });

    it("observe right after create is up to date, with the spec's keys in any order", async () => {
      const name = kit.externalName();
      const resource = kit.resource(name);
      const client = await kit.client(resource);
      await client.create(resource, kit.call());
      const observation = await kit.settle(client, resource);
      assert.deepEqual(observation.diff ?? [], [], 'no difference right after create');
      assert.equal(observation.upToDate, true);
      for (const reordered of [reverseKeys(resource), sortKeys(resource)]) {
        const again = await client.observe(reordered, kit.call());
        assert.deepEqual(again.diff ?? [], [], `keys in another order are no difference: ${JSON.stringify(reordered.spec)}`);
        assert.equal(again.upToDate, true);
      }
    });

    it('a no-op resync makes zero cloud writes and zero API writes', async () => {
      const object = await kit.apply();
      await kit.reconcileUntil(object, 'Ready and Synced', isReadyAndSynced);
      // Let the writes that follow a create (markers, status) settle first.
      await kit.reconcile(object);
      const cloudBefore = kit.cloudWrites().length;
      const apiBefore = kit.objects.writes.length;
      for (let i = 0; i < 3; i++) await kit.reconcile(object);
      assert.deepEqual(kit.cloudWrites().slice(cloudBefore), [], 'no cloud write on a no-op resync');
      assert.deepEqual(kit.objects.writes.slice(apiBefore), [], 'no API write on a no-op resync');
    });

    it('a drift check makes the cloud calls the provider declares in observeCalls, service by service', async (t) => {
      const declared = plugin.observeCalls?.[kind];
      if (!declared) {
        t.skip(`provider ${plugin.provider} declares no observeCalls for ${kind}: the engine counts one call per drift check, and a drift-check budget may be overrun`);
        return;
      }
      const object = await kit.apply();
      await kit.reconcileUntil(object, 'Ready and Synced', isReadyAndSynced);
      await kit.reconcile(object);
      const from = kit.calls.length;
      await kit.reconcile(object);
      const made: Record<string, number> = {};
      for (const c of kit.calls.slice(from)) made[c.service ?? ''] = (made[c.service ?? ''] ?? 0) + 1;
      t.diagnostic(`${plugin.provider} ${kind} drift check: ${kit.calls.slice(from).map((c) => c.operation).join(', ')}`);
      assert.deepEqual(made, { ...declared }, `a drift check of a ${kind} in sync made ${JSON.stringify(made)}; observeCalls declares ${JSON.stringify(declared)}`);
    });

    it('a crash between create and its marker ends with exactly one resource, and no leak', async () => {
      const object = await kit.apply();
      let crashed = false;
      kit.objects.beforeWrite = ({ patch }) => {
        if (!crashed && patch?.annotations?.[Annotations.createSucceeded]) {
          crashed = true;
          throw new Error('simulated crash: the process died after create returned');
        }
      };
      await assert.rejects(kit.reconcile(object), /simulated crash/);
      kit.objects.beforeWrite = undefined;
      // The resource exists and matches the spec: any cloud write from here
      // on (whatever the cloud calls its create: CreateBucket, buckets.insert)
      // would be a second create or a needless change.
      const writes = kit.cloudWrites().length;
      const adopted = await kit.finishUnknownCreate(object);
      const done = adopted ?? (await kit.reconcileUntil(object, 'Ready and Synced after the crash', isReadyAndSynced));
      assert.ok(done.metadata.annotations?.[Annotations.createSucceeded], 'the create is recorded');
      if (!adopted) assert.deepEqual(kit.cloudWrites().slice(writes), [], 'no second create: no cloud write once the resource exists');
      kit.assertOurs(await kit.observe(done), done);
      await kit.deleteAndConfirmGone(object);
    });

    it('a crash between create and tagging ends with exactly one resource, and no leak', async () => {
      const object = await kit.apply();
      // Everything after the first cloud write fails, as if the process died (or was throttled or denied) there.
      await kit.reconcile(object, { abortAfterFirstWrite: true }).catch(() => undefined);
      const first = kit.objects.peek(kind, NAMESPACE, object.metadata.name ?? '');
      assert.ok(first?.metadata.annotations?.[Annotations.createPending], 'the create-pending marker was written before the create');
      const done = (await kit.finishUnknownCreate(object)) ?? (await kit.reconcileUntil(object, 'Ready and Synced after the interrupted create', isReadyAndSynced));
      const observation = await kit.observe(done);
      assert.equal(observation.exists, true);
      kit.assertOurs(observation, done);
      await kit.deleteAndConfirmGone(object);
    });

    it('access denied on observe is an error, never absence: nothing is created again and nothing is lost', async () => {
      const object = await kit.apply();
      const ready = await kit.reconcileUntil(object, 'Ready and Synced', isReadyAndSynced);
      kit.denyAccess();
      // The provider itself, asked directly: an observe that answers "not found" here would make
      // the engine create again (a write the denial may happen to refuse) or let a finalizer go.
      const answer = await (await kit.client(ready)).observe(ready, kit.call()).then(
        (observation) => `an answer (exists: ${String(observation.exists)})`,
        () => undefined,
      );
      assert.equal(answer, undefined, `a denied observe throws, never reports absence: it returned ${answer}`);
      const attempts = kit.calls.length;
      await kit.reconcile(object);
      const denied = kit.objects.peek(kind, NAMESPACE, object.metadata.name ?? '');
      const synced = denied?.status?.conditions?.find((c) => c.type === ConditionTypes.Synced);
      assert.equal(synced?.status, 'False', 'Synced says the cloud could not be read');
      assert.notEqual(synced?.reason, Reasons.ReconcileSuccess);
      assert.deepEqual(kit.writeAttempts(attempts), [], 'no write tried (no second create) while access is denied');
      kit.restoreAccess();
      assert.equal((await kit.observe(ready)).exists, true, 'the resource is still there');
    });

    it("probe answers as observe does on existence and owner tags: a free name, our resource, another owner's", async (t) => {
      const probing = await kit.probing(t);
      if (!probing) return;
      const { name, resource, client, probe } = probing;
      assert.equal((await kit.assertProbeAgrees(client, resource, 'a free name'))?.exists, false, 'a fresh name does not exist');
      await client.create(resource, kit.call());
      await kit.settle(client, resource);
      const ours = await kit.assertProbeAgrees(client, resource, 'our resource');
      assert.equal(ours?.exists, true);
      const created = kit.markedCreated(resource, (await client.observe(resource, kit.call())).identity);
      if (ours) {
        const verdict = ownershipOf(created, ours, ownerTagsFor(resource, kit.clusterId), name);
        assert.ok(mayManage(verdict), `our resource is ours by its probe (owner tags, or the identity recorded at creation), not ${verdict}`);
      }
      const taken = kit.externalName();
      await kit.createForeign(taken);
      const wanting = kit.resource(taken);
      const theirs = await kit.assertProbeAgrees(await kit.client(wanting), wanting, "another owner's resource");
      if (theirs) {
        const verdict = ownershipOf(wanting, theirs, ownerTagsFor(wanting, kit.clusterId), taken);
        assert.ok(!mayManage(verdict), `another owner's resource is never ours by its probe, not ${verdict}`);
      }
      await kit.deleteForeign(taken);
      await client.delete(resource, kit.call());
      await waitFor(`${name} gone`, async () => !(await probe(resource, kit.call())).exists, kit.timeoutMs);
      await kit.assertProbeAgrees(client, resource, 'a deleted resource');
    });

    it('a denied or timed-out probe throws what observe throws, never absence', async (t) => {
      const probing = await kit.probing(t, { created: true });
      if (!probing) return;
      const { resource, client, probe } = probing;
      kit.denyAccess();
      const denied = await kit.client(resource);
      const outcome = await kit.assertProbeAgrees(denied, resource, 'access denied');
      assert.equal(outcome, undefined, 'a denied read is an error, never an answer');
      kit.restoreAccess();
      await assert.rejects(probe(resource, { signal: AbortSignal.abort(new Error('the reconcile deadline passed')) }), 'a probe cut short by its deadline rejects');
      assert.equal((await probe(resource, kit.call())).exists, true, 'the resource is still there');
      await client.delete(resource, kit.call());
    });

    it('probe makes no more cloud calls than observe, and a delete through the engine no more than with observe', async (t) => {
      const probing = await kit.probing(t, { created: true });
      if (!probing) return;
      const { resource, client, probe } = probing;
      const observeCalls = await kit.callsOf(() => client.observe(resource, kit.call()));
      const probeCalls = await kit.callsOf(() => probe(resource, kit.call()));
      assert.ok(probeCalls.length <= observeCalls.length, `probe (${probeCalls.join(', ')}) reads no more than observe (${observeCalls.join(', ')})`);
      await client.delete(resource, kit.call());
      const withObserve = await kit.deleteCalls({ probe: false });
      const withProbe = await kit.deleteCalls({ probe: true });
      t.diagnostic(`${plugin.provider} ${kind} delete: ${withObserve.length} cloud calls with observe (${withObserve.join(', ')}); ${withProbe.length} with probe (${withProbe.join(', ')})`);
      assert.ok(withProbe.length <= withObserve.length, `a delete with probe (${withProbe.join(', ')}) costs no more than with observe (${withObserve.join(', ')})`);
    });

    it('access denied on delete keeps the finalizer until the cloud confirms the resource is gone', async () => {
      const object = await kit.apply();
      const ready = await kit.reconcileUntil(object, 'Ready and Synced', isReadyAndSynced);
      kit.denyAccess();
      kit.objects.markDeleted(kind, NAMESPACE, object.metadata.name ?? '');
      await kit.reconcile(object);
      const held = kit.objects.peek(kind, NAMESPACE, object.metadata.name ?? '');
      assert.ok(held?.metadata.finalizers?.includes(FINALIZER), 'the finalizer stays while the cloud cannot be asked');
      kit.restoreAccess();
      assert.equal((await kit.observe(ready)).exists, true, 'nothing was lost');
      await kit.reconcileUntil(object, 'the object released', (o) => o === undefined);
      assert.equal((await kit.observe(ready)).exists, false, 'and the resource is gone: no leak');
    });

    it('create-failed: a create the cloud refuses (a name taken) is a definite refusal that changes nothing, and the engine records it', async () => {
      const taken = kit.externalName();
      await kit.createForeign(taken);
      const before = await kit.observeForeign(taken);
      const resource = kit.resource(taken);
      const client = await kit.client(resource);
      const error = await client.create(resource, kit.call()).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (error !== undefined) {
        assert.equal(createOutcomeOf(error), 'refused', `a refused create says the cloud did nothing (ProviderError.noEffect), not ${describeError(error)}`);
      } else {
        // Only a cloud without tags may answer "already exists" as success; it proves nothing either way.
        assert.equal(before.ownerTags, undefined, 'a create over another owner\'s tagged resource never succeeds');
      }
      const after = await kit.observeForeign(taken);
      assert.deepEqual(after.ownerTags, before.ownerTags, "the other owner's tags are untouched");
      if (before.identity && after.identity) assert.deepEqual(after.identity, before.identity, 'the same resource: not re-made');

      // Through the engine: the refusal is recorded, and the object lets go without a cloud delete.
      // Someone else takes the name between the engine's observe (free) and its create call.
      await kit.deleteForeign(taken);
      await waitFor(`${taken} free`, async () => !(await kit.observeForeign(taken)).exists, kit.timeoutMs);
      const object = await kit.apply({ name: taken });
      kit.beforeNextWrite(async () => await kit.createForeign(taken));
      await kit.reconcile(object);
      const stored = kit.objects.peek(kind, NAMESPACE, object.metadata.name ?? '');
      assert.ok(stored?.metadata.annotations?.[Annotations.createFailed], 'create-failed recorded');
      assert.equal(stored?.metadata.annotations?.[Annotations.createPending], undefined, 'no create of unknown outcome left pending');
      const writes = kit.cloudWrites().length;
      kit.objects.markDeleted(kind, NAMESPACE, object.metadata.name ?? '');
      await kit.reconcileUntil(object, 'the object released', (o) => o === undefined);
      assert.deepEqual(kit.cloudWrites().slice(writes), [], 'nothing of ours was there: no delete');
      assert.equal((await kit.observeForeign(taken)).exists, true, 'the other owner still has it');
      await kit.deleteForeign(taken);
    });

    it('identity recorded and compared: observe and probe report the cloud\'s identity, the engine records it, and a resource made again has another', async (t) => {
      if (kit.skipOptedOut(t, 'identity')) return;
      const object = await kit.apply();
      const ready = await kit.reconcileUntil(object, 'Ready and Synced', isReadyAndSynced);
      const observed = await kit.observe(ready);
      assert.ok(observed.identity && Object.keys(observed.identity).length > 0, 'observe reports the identity');
      assert.deepEqual(ready.status?.identity, observed.identity, 'the engine recorded it at creation');
      const client = await kit.client(ready);
      if (client.probe) assert.deepEqual((await client.probe(ready, kit.call())).identity, observed.identity, 'probe reports the same identity');
      assert.deepEqual((await kit.observe(ready)).identity, observed.identity, 'stable while the resource lives');

      // Someone deletes it and makes another under the name: another identity, and the engine stops.
      await client.delete(ready, kit.call());
      await waitFor(`${ready.spec.name} gone`, async () => !(await client.observe(ready, kit.call())).exists, kit.timeoutMs);
      await sleep(1_100); // clouds that keep creation times to the second still tell the two apart
      const stranger = kit.resource(ready.spec.name ?? '', 'someone-else');
      await waitFor(`${ready.spec.name} made again`, async () => {
        try {
          await (await kit.client(stranger, {})).create(stranger, kit.call());
          return true;
        } catch (error) {
          if (isRetryable(error)) return false; // the name is still being released
          throw error;
        }
      }, kit.timeoutMs, 500);
      const again = await kit.settle(await kit.client(stranger, {}), stranger);
      assert.ok(again.identity, 'the new resource has an identity');
      assert.equal(compareIdentity(observed.identity, again.identity), 'different', `a resource made again has another identity (${JSON.stringify(observed.identity)} vs ${JSON.stringify(again.identity)})`);
      const writes = kit.cloudWrites().length;
      await kit.reconcileUntil(object, 'ExternalResourceReplaced or NotOwned', (o) =>
        o?.status?.conditions?.some((c) => c.type === ConditionTypes.Synced && (c.reason === Reasons.ExternalResourceReplaced || c.reason === Reasons.NotOwned)) ?? false,
      );
      kit.objects.markDeleted(kind, NAMESPACE, object.metadata.name ?? '');
      await kit.reconcileUntil(object, 'the object released', (o) => o === undefined);
      assert.deepEqual(kit.cloudWrites().slice(writes), [], 'the replacement is never written or deleted');
      await (await kit.client(stranger, {})).delete(stranger, kit.call());
    });

    it('evidence or its absence declared: a resource it creates carries owner tags or an identity, else its client says before the create that it cannot', async () => {
      // Retain: a client that says its resources hold no evidence is refused a create under Delete.
      const object = await kit.apply({ deletionPolicy: 'Retain' });
      const ready = await kit.reconcileUntil(object, 'Ready and Synced', isReadyAndSynced);
      const observed = await kit.observe(ready);
      const client = await kit.client(ready);
      const evidence = hasEvidence(observed, ownerTagsFor(ready, kit.clusterId));
      if (evidence) assert.equal(client.identityUnavailable, undefined, 'a client whose resources carry evidence does not say they cannot');
      else assert.ok(client.identityUnavailable, 'a resource with neither owner tags nor an identity: the client must say so (identityUnavailable)');
      kit.objects.markDeleted(kind, NAMESPACE, object.metadata.name ?? '');
      await kit.reconcileUntil(object, 'the object released', (o) => o === undefined);
    });

    it('with access that can hold no evidence, the client says why, and the engine creates nothing under Delete: IdentityUnavailable names spec.deletionPolicy', async (t) => {
      if (!kit.useAccessWithoutEvidence()) {
        t.skip('every access this provider takes can set and read its evidence (no accessWithoutEvidence)');
        return;
      }
      const object = await kit.apply({ deletionPolicy: 'Delete' });
      const client = await kit.client(object);
      assert.ok(client.identityUnavailable, 'the client says, before any create, why its resources can hold no evidence');
      const from = kit.calls.length;
      const refused = await kit.reconcileUntil(object, Reasons.IdentityUnavailable, (o) =>
        o?.status?.conditions?.some((c) => c.type === ConditionTypes.Synced && c.reason === Reasons.IdentityUnavailable) ?? false,
      );
      assert.deepEqual(kit.writeAttempts(from), [], 'no cloud write was even tried');
      assert.match(refused.status?.conditions?.find((c) => c.type === ConditionTypes.Synced)?.message ?? '', /spec\.deletionPolicy/, 'the condition names the field to change');
      assert.equal((await kit.observe(object)).exists, false, 'nothing was created');

      // Under Retain the resource is made, and it indeed holds no evidence.
      const retained = kit.objects.put({ ...refused, spec: { ...refused.spec, deletionPolicy: 'Retain' } } as ManagedResource);
      const ready = await kit.reconcileUntil(retained, 'Ready and Synced under Retain', isReadyAndSynced);
      assert.equal(hasEvidence(await client.observe(ready, kit.call()), ownerTagsFor(ready, kit.clusterId)), false, 'the resource made holds no evidence, as the client said');
      kit.objects.markDeleted(kind, NAMESPACE, retained.metadata.name ?? '');
      await kit.reconcileUntil(retained, 'the object released', (o) => o === undefined);
      assert.equal((await kit.observe(ready)).exists, true, 'Retain leaves the resource (the kit cleans it up)');
    });

    it('protection never lowered: a protection set out of band is reported, kept by a resync, and never removed by a delete', async (t) => {
      if (kit.skipOptedOut(t, 'protection')) return;
      const protect = kit.protectHook();
      assert.ok(protect, 'ConformanceBackend.protect is required (or opt out of "protection", with the reason)');
      const object = await kit.apply();
      const ready = await kit.reconcileUntil(object, 'Ready and Synced', isReadyAndSynced);
      const name = ready.spec.name ?? '';
      const { field, undo } = await protect(name);
      try {
        const observed = await kit.observe(ready);
        const setting = observed.protection?.find((p) => p.field === field);
        assert.ok(setting?.enabled, `observe reports ${field} as enabled`);
        await kit.reconcileUntil(object, `a resync that keeps ${field}`, (o) => o?.status?.conditions?.some((c) => c.type === ConditionTypes.Synced) ?? false);
        for (let i = 0; i < 2; i++) await kit.reconcile(object);
        assert.ok((await kit.observe(ready)).protection?.find((p) => p.field === field)?.enabled, `a resync never lowers ${field}`);
        kit.objects.markDeleted(kind, NAMESPACE, object.metadata.name ?? '');
        for (let i = 0; i < 2; i++) await kit.reconcile(object);
        const still = await kit.observe(ready);
        if (setting?.blocksDeletion) {
          assert.equal(still.exists, true, `a resource protected by ${field} is not deleted`);
          // The provider itself, asked directly, refuses rather than turn the protection off.
          const direct = await (await kit.client(ready)).delete(ready, kit.call()).then(
            () => undefined,
            (e: unknown) => e,
          );
          assert.ok(direct instanceof DeletionBlockedError, `delete of a resource protected by ${field} throws DeletionBlockedError, not ${direct === undefined ? 'success' : describeError(direct)}`);
          const afterDirect = await kit.observe(ready);
          assert.equal(afterDirect.exists, true, `a resource protected by ${field} is not deleted by the provider`);
          assert.ok(afterDirect.protection?.find((p) => p.field === field)?.enabled, `delete never removes ${field}`);
          const stored = kit.objects.peek(kind, NAMESPACE, object.metadata.name ?? '');
          const synced = stored?.status?.conditions?.find((c) => c.type === ConditionTypes.Synced);
          assert.equal(synced?.reason, Reasons.DeletionBlocked);
          assert.ok(synced?.message.includes(field), `DeletionBlocked names ${field}`);
        }
        if (still.exists) assert.ok(still.protection?.find((p) => p.field === field)?.enabled, `a delete never removes ${field}`);
      } finally {
        await undo();
      }
      await kit.reconcileUntil(object, 'the object released', (o) => o === undefined);
    });

    it('no credential in any URL or id it reports: atProvider, identity, target, status and Events', async () => {
      const object = await kit.apply();
      const ready = await kit.reconcileUntil(object, 'Ready and Synced', isReadyAndSynced);
      const observed = await kit.observe(ready);
      const target = cloudTargetFor(plugin, kind, kit.lookups.providerConfigs.get('default') as ProviderConfig, kit.lookups.secrets.get(`${SECRET.namespace}/${SECRET.name}`));
      const reported: [string, unknown][] = [
        ['atProvider', observed.atProvider],
        ['identity', observed.identity],
        ['target', target],
        ['status', ready.status],
        ['events', kit.events.about(object.metadata.name ?? '').map((e) => e.message)],
      ];
      const secrets = Object.values(kit.credentials() ?? {}).filter((v) => v.length >= 6);
      for (const [what, value] of reported) {
        for (const text of strings(value)) {
          for (const secret of secrets) assert.ok(!text.includes(secret), `${what} holds a credential value: ${text}`);
          if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
            const url = new URL(text);
            assert.equal(url.search, '', `${what} holds a URL with a query string: ${text}`);
            assert.equal(url.username + url.password, '', `${what} holds a URL with user info: ${text}`);
          }
          assert.doesNotMatch(text, /[?&](sig|signature|x-amz-signature|x-goog-signature|sv|se|sp|token|access_token|key)=/i, `${what} holds a signed query: ${text}`);
        }
      }
      await kit.deleteAndConfirmGone(object);
    });

    it('release: Retain removes our owner tags and nothing else, so another cluster can adopt the resource', async (t) => {
      if (kit.skipOptedOut(t, 'release')) return;
      const retained = await kit.apply({ deletionPolicy: 'Retain' });
      const ready = await kit.reconcileUntil(retained, 'Ready and Synced', isReadyAndSynced);
      const before = await kit.observe(ready);
      kit.objects.markDeleted(kind, NAMESPACE, retained.metadata.name ?? '');
      await kit.reconcileUntil(retained, 'the object released', (o) => o === undefined);
      const after = await kit.observe(ready);
      assert.equal(after.exists, true, 'Retain leaves the resource');
      const client = await kit.client(ready);
      if (before.ownerTags === undefined) {
        // Retained, so the kit deletes it itself: the engine never will.
        t.skip('this kind has no tags: nothing to release');
        await client.delete(ready, kit.call());
        return;
      }
      assert.notEqual(after.ownerTags?.[OwnerTags.managedBy], MANAGED_BY, 'our owner tags are gone (managed-by at least)');
      // The missing owner tags are the diff a provider reports as `ownerTags.<key>`; anything else changed is not a release.
      const changed = (after.diff ?? []).filter((d) => !d.field.startsWith('ownerTags.'));
      assert.deepEqual(changed, [], 'nothing but the owner tags changed');
      if (before.identity) assert.deepEqual(after.identity, before.identity, 'the same resource');
      // By its tags alone (the object is gone, and with it the identity it recorded), the resource is no longer ours...
      const released = { ...ready, metadata: { ...ready.metadata, annotations: {} }, status: {} } as ManagedResource;
      const expected = ownerTagsFor(ready, kit.clusterId);
      assert.notEqual(ownershipOf(released, { ownerTags: after.ownerTags }, expected), 'ours', 'the released resource is no longer ours by its tags');
      // ...and no longer another owner's: an object of another cluster that asks may adopt it.
      const adopting = { ...released, metadata: { ...released.metadata, annotations: { [Annotations.adopt]: 'true' } } } as ManagedResource;
      const elsewhere = ownerTagsFor(adopting, `${kit.clusterId}-elsewhere`);
      assert.equal(ownershipOf(adopting, { ownerTags: after.ownerTags }, elsewhere), 'adopt', 'another cluster may adopt the released resource');
      await client.delete(ready, kit.call());
    });

    it('a name taken by another owner is never adopted, updated or deleted', async () => {
      const name = kit.externalName();
      await kit.createForeign(name);
      const object = await kit.apply({ name });
      const writes = kit.cloudWrites().length;
      const blocked = await kit.reconcileUntil(object, 'NotOwned', (o) => o?.status?.conditions?.some((c) => c.type === ConditionTypes.Synced && c.reason === Reasons.NotOwned) ?? false);
      assert.ok(!blocked.metadata.annotations?.[Annotations.createSucceeded], 'never recorded as ours');
      kit.objects.markDeleted(kind, NAMESPACE, object.metadata.name ?? '');
      await kit.reconcileUntil(object, 'the object released', (o) => o === undefined);
      assert.deepEqual(kit.cloudWrites().slice(writes), [], 'no write to a resource that is not ours');
      assert.equal((await kit.observeForeign(name)).exists, true, 'the other owner still has it');
      await kit.deleteForeign(name);
    });

    describe('every managed field, changed out of band, is detected and repaired, with the field named', () => {
      // The cases are known only once the backend has started; one case per field, run in order.
      it('repairs each field the provider lists', async () => {
        if (kit.drift.length === 0) {
          assert.ok(kit.noManagedFields, 'the provider lists its managed fields, or says why its kind has none (noManagedFields)');
          const object = await kit.apply();
          const ready = await kit.reconcileUntil(object, 'Ready and Synced', isReadyAndSynced);
          const observed = await kit.observe(ready);
          assert.deepEqual(observed.diff ?? [], [], `nothing to repair on a kind without managed fields (${kit.noManagedFields})`);
          assert.equal(observed.upToDate, true);
          await kit.deleteAndConfirmGone(object);
          return;
        }
        for (const drift of kit.drift) {
          const object = await kit.apply();
          const ready = await kit.reconcileUntil(object, 'Ready and Synced', isReadyAndSynced);
          await drift.change(ready.spec.name ?? '');
          const observed = await kit.observe(ready);
          assert.ok(
            (observed.diff ?? []).some((d) => d.field === drift.field || d.field.startsWith(`${drift.field}.`) || d.field.startsWith(`${drift.field}[`)),
            `${drift.field}: the change is detected (diff: ${JSON.stringify(observed.diff)})`,
          );
          // Some clouds take a moment (a table UPDATING): reconcile as the queue would, until the repair is reported.
          const repairedDrift = () => kit.events.about(object.metadata.name ?? '').find((e) => e.reason === Reasons.RepairedDrift);
          await kit.reconcileUntil(object, `${drift.field} repaired`, () => repairedDrift() !== undefined).catch(() => undefined);
          const event = repairedDrift();
          assert.ok(event, `${drift.field}: a RepairedDrift Event (events: ${JSON.stringify(kit.events.about(object.metadata.name ?? '').map((e) => `${e.reason}: ${e.message}`))})`);
          assert.ok(event.message.includes(drift.field), `${drift.field}: the Event names the field: ${event.message}`);
          const repaired = await kit.observe(ready);
          assert.equal(repaired.upToDate, true, `${drift.field}: repaired (diff: ${JSON.stringify(repaired.diff)})`);
          await kit.deleteAndConfirmGone(object);
        }
      });
    });

    it('every cloud call names a rate-limited service the provider declares, so the engine can pace it', () => {
      const declared = Object.keys(plugin.rateLimits ?? {});
      if (declared.length === 0) return;
      assert.ok(kit.calls.length > 0, 'the cases above made cloud calls');
      const unpaced = [...new Set(kit.calls.filter((c) => c.service === undefined || !declared.includes(c.service)).map((c) => `${c.operation} (${c.service ?? 'no service'})`))];
      assert.deepEqual(unpaced, [], `calls outside the declared services ${declared.join(', ')}`);
    });
  });
}

function isReadyAndSynced(resource: ManagedResource | undefined): boolean {
  const conditions = resource?.status?.conditions ?? [];
  return conditions.some((c) => c.type === ConditionTypes.Ready && c.status === 'True') && conditions.some((c) => c.type === ConditionTypes.Synced && c.status === 'True');
}

/** The kit's world: the engine's reconciler over in-memory API objects and the provider's real backend. */
class Kit<K extends ManagedKindName> {
  readonly objects = new InMemoryObjects();
  readonly lookups = new InMemoryLookups();
  readonly events = new InMemoryEvents();
  readonly calls: RecordedCall[] = [];
  readonly clusterId = `conformance-${randomUUID().slice(0, 8)}`;
  readonly timeoutMs: number;
  readonly drift: readonly DriftCase[];
  readonly noManagedFields: string | undefined;
  readonly #plugin: ProviderPlugin;
  readonly #kind: K;
  readonly #backend: ConformanceBackend<K>;
  readonly #reconciler: ManagedReconciler;
  /** The same engine over the provider with its probe hidden: the delete path as it was before probe. */
  readonly #withoutProbe: ManagedReconciler;
  readonly #isWrite: (operation: string) => boolean;
  readonly #created = new Set<string>();
  #beforeWrite: (() => Promise<void>) | undefined;
  #abortAfterWrite: AbortController | undefined;
  #count = 0;

  constructor(plugin: ProviderPlugin, kind: K, backend: ConformanceBackend<K>) {
    this.#plugin = plugin;
    this.#kind = kind;
    this.#backend = backend;
    this.drift = backend.drift;
    this.noManagedFields = backend.noManagedFields;
    this.timeoutMs = backend.timeoutMs ?? 60_000;
    this.#isWrite = backend.isWrite ?? ((operation) => WRITE_VERBS.test(operation));
    this.restoreAccess();
    const reconciler = (provider: ProviderPlugin): ManagedReconciler =>
      new ManagedReconciler(
        kind,
        { kube: this.objects, lookups: this.lookups, providers: new Map([[provider.provider, provider]]), events: this.events, outputs: noOutputs },
        { clusterId: this.clusterId, pollIntervalMs: 100, resyncFloorMs: 100, cloudCallRecorder: () => this.#recorder },
      );
    this.#reconciler = reconciler(plugin);
    this.#withoutProbe = reconciler(withoutProbe(plugin, kind));
  }

  /** Skips the case, with the provider's reason, when it opted out of the rule; true when skipped. */
  skipOptedOut(t: TestContext, rule: ConformanceOptOut): boolean {
    const reason = this.#backend.optOut?.[rule];
    if (reason === undefined) return false;
    t.skip(`opted out of "${rule}": ${reason}`);
    return true;
  }

  /** Counts every call, and (in the crash-after-create case) aborts everything after the first write. */
  readonly #recorder: CloudCallRecorder = async (operation, call, options) => {
    const service = options?.service;
    const hook = this.#isWrite(operation) ? this.#beforeWrite : undefined;
    if (hook) {
      this.#beforeWrite = undefined;
      await hook();
    }
    try {
      const result = await call();
      this.calls.push({ operation, ok: true, service });
      if (this.#isWrite(operation)) this.#abortAfterWrite?.abort(new Error(`simulated crash after ${operation}`));
      return result;
    } catch (error) {
      this.calls.push({ operation, ok: false, service });
      throw error;
    }
  };

  /**
   * A fresh name, its resource and client, and the client's probe (created and settled first when
   * asked); undefined, with the case skipped, when the provider has no probe.
   */
  async probing(t: TestContext, options: { created?: boolean } = {}): Promise<{ name: string; resource: ManagedResource; client: ExternalClient; probe: NonNullable<ExternalClient['probe']> } | undefined> {
    const name = this.externalName();
    const resource = this.resource(name);
    const client = await this.client(resource);
    const probe = client.probe?.bind(client);
    if (!probe) {
      t.skip('the provider has no probe: the engine observes on delete');
      return undefined;
    }
    if (options.created) {
      await client.create(resource, this.call());
      await this.settle(client, resource);
    }
    return { name, resource, client, probe };
  }

  /** The cloud calls `read` makes, by operation. */
  async callsOf(read: () => Promise<unknown>): Promise<string[]> {
    const from = this.calls.length;
    await read();
    return this.calls.slice(from).map((c) => c.operation);
  }

  /**
   * The cloud calls of one delete through the engine, from the pass that finds the object deleting
   * to its release, with the provider's probe or (`probe: false`) with observe, as before probe.
   */
  async deleteCalls(options: { probe: boolean }): Promise<string[]> {
    const object = await this.apply();
    await this.reconcileUntil(object, 'Ready and Synced', isReadyAndSynced);
    const stored = this.objects.peek(this.#kind, NAMESPACE, object.metadata.name ?? '') ?? object;
    this.objects.markDeleted(this.#kind, NAMESPACE, object.metadata.name ?? '');
    const from = this.calls.length;
    const reconciler = options.probe ? this.#reconciler : this.#withoutProbe;
    await waitFor(`the object released (${this.#kind} ${object.metadata.name})`, async () => {
      await reconciler.reconcile({ namespace: NAMESPACE, name: object.metadata.name ?? '' });
      return this.objects.peek(this.#kind, NAMESPACE, object.metadata.name ?? '') === undefined;
    }, this.timeoutMs, 100);
    const calls = this.calls.slice(from).map((c) => c.operation);
    assert.equal((await this.observe(stored)).exists, false, `${stored.spec.name} is gone from the cloud: no leak`);
    return calls;
  }

  /**
   * Runs probe and observe on the same client and asserts they agree: the same existence, owner
   * tags and identity (ownership is judged on these), or the same error (class and code). The probe's answer, or undefined when both threw.
   */
  async assertProbeAgrees(client: ExternalClient, resource: ManagedResource, what: string): Promise<Presence | undefined> {
    const probe = client.probe?.bind(client);
    assert.ok(probe, 'the client has a probe');
    const outcome = async (read: () => Promise<Presence>): Promise<{ presence: Presence } | { error: string }> => {
      try {
        const { exists, ownerTags, identity } = await read();
        return { presence: { exists, ownerTags, identity } };
      } catch (error) {
        return { error: describeError(error) };
      }
    };
    const observed = await outcome(() => client.observe(resource, this.call()));
    const probed = await outcome(() => probe(resource, this.call()));
    assert.deepEqual(probed, observed, `${what}: probe answers what observe answers`);
    return 'presence' in probed ? probed.presence : undefined;
  }

  /** The resource as the engine holds it once its create is recorded. */
  /** The object as the engine leaves it after creating the resource: create-succeeded, and the identity recorded in status. */
  markedCreated(resource: ManagedResource, identity?: Readonly<Record<string, string>>): ManagedResource {
    return {
      ...resource,
      metadata: { ...resource.metadata, annotations: { ...resource.metadata.annotations, [Annotations.createSucceeded]: new Date().toISOString() } },
      ...(identity ? { status: { ...resource.status, identity: { ...identity } } } : {}),
    } as ManagedResource;
  }

  /** Every write the provider sent since call number `from`, whether the cloud accepted it or not. */
  writeAttempts(from: number): string[] {
    return this.calls.slice(from).filter((c) => this.#isWrite(c.operation)).map((c) => c.operation);
  }

  cloudWrites(): string[] {
    return this.calls.filter((c) => c.ok && this.#isWrite(c.operation)).map((c) => c.operation);
  }

  call(): CallOptions {
    return { signal: AbortSignal.timeout(this.timeoutMs) };
  }

  /** A fresh external name by the provider's own rules. */
  externalName(): string {
    return namingRulesFor(this.#plugin, this.#kind).defaultName({ clusterId: this.clusterId, namespace: NAMESPACE, name: `case-${++this.#count}-${randomUUID().slice(0, 6)}` });
  }

  resource(externalName: string, metadataName = `direct-${++this.#count}`): ManagedResource {
    this.#created.add(externalName);
    return {
      apiVersion: API_VERSION,
      kind: this.#kind,
      metadata: { name: metadataName, namespace: NAMESPACE, uid: randomUUID() },
      spec: { ...structuredClone(this.#backend.spec()), name: externalName, deletionPolicy: 'Delete' },
    } as ManagedResource;
  }

  #context(resource: ManagedResource, ownerTags = ownerTagsFor(resource, this.clusterId)): ConnectionContext {
    return {
      providerConfig: this.lookups.providerConfigs.get('default') as ProviderConfig,
      credentials: this.lookups.secrets.get(`${SECRET.namespace}/${SECRET.name}`),
      externalName: resource.spec.name ?? '',
      ownerTags,
      recordCall: this.#recorder,
    };
  }

  async client(resource: ManagedResource, ownerTags?: Record<string, string>): Promise<ExternalClient> {
    const connector = this.#plugin.connectors[this.#kind];
    assert.ok(connector, `${this.#plugin.provider} has a connector for ${this.#kind}`);
    return await (connector as { connect(r: ManagedResource, c: ConnectionContext): Promise<ExternalClient> }).connect(resource, this.#context(resource, ownerTags));
  }

  /** Observes until ready (a table leaving CREATING), with good access. */
  async settle(client: ExternalClient, resource: ManagedResource): Promise<Observation> {
    return await waitFor(`${resource.spec.name} ready`, async () => {
      const observation = await client.observe(resource, this.call());
      return observation.exists && observation.ready ? observation : undefined;
    }, this.timeoutMs, 200);
  }

  async observe(resource: ManagedResource): Promise<Observation> {
    const saved = this.#access();
    this.restoreAccess();
    try {
      return await (await this.client(resource)).observe(resource, this.call());
    } finally {
      this.#setAccess(saved);
    }
  }

  assertOurs(observation: Observation, resource: ManagedResource): void {
    if (observation.ownerTags === undefined) return; // a cloud without tags: the markers prove it
    const expected = ownerTagsFor(resource, this.clusterId);
    for (const [key, value] of Object.entries(expected)) assert.equal(observation.ownerTags[key], value, `owner tag ${key}`);
  }

  /** Stores a new object (as kubectl apply would), optionally with a given external name and deletion policy. */
  async apply(spec: { name?: string; deletionPolicy?: 'Delete' | 'Retain' } = {}): Promise<ManagedResource> {
    const name = `object-${++this.#count}`;
    const externalName = spec.name ?? this.externalName();
    this.#created.add(externalName);
    return this.objects.put({
      apiVersion: API_VERSION,
      kind: this.#kind,
      metadata: { name, namespace: NAMESPACE },
      spec: { ...structuredClone(this.#backend.spec()), name: externalName, deletionPolicy: spec.deletionPolicy ?? 'Delete' },
    } as ManagedResource);
  }

  /** Runs `hook` once, just before the next recorded cloud write goes out (someone else acting in between). */
  beforeNextWrite(hook: () => Promise<void>): void {
    this.#beforeWrite = hook;
  }

  /** The backend's hook that turns a protection on out of band. */
  protectHook(): ConformanceBackend<K>['protect'] {
    return this.#backend.protect;
  }

  /** The credentials the backend accepts (to check none leaks). */
  credentials(): Record<string, string> | undefined {
    return this.#backend.credentials;
  }

  /**
   * After a create whose outcome the engine cannot know (a crash mid-create): where the evidence
   * (owner tags, recorded identity, a generated name) does not prove the resource ours, the engine
   * must stop with NotOwned, write nothing and say how to adopt; the kit then adopts it, as a user
   * would, and waits for Ready and Synced, returning the adopted object. Returns undefined when
   * the engine's first pass did not stop on NotOwned (the evidence proved the resource ours, and
   * the caller expects the engine to finish on its own; that pass counts as the caller's).
   */
  async finishUnknownCreate(object: ManagedResource): Promise<ManagedResource | undefined> {
    const name = object.metadata.name ?? '';
    const writes = this.cloudWrites().length;
    await this.reconcile(object);
    const blocked = this.objects.peek(this.#kind, NAMESPACE, name);
    const synced = blocked?.status?.conditions?.find((c) => c.type === ConditionTypes.Synced);
    if (!blocked || synced?.reason !== Reasons.NotOwned) return undefined;
    assert.match(synced.message, /k8or\.io\/adopt/, 'the condition says how to adopt');
    assert.deepEqual(this.cloudWrites().slice(writes), [], 'nothing written while ownership is not proven');
    const found = await this.observe(blocked);
    assert.ok(!mayManage(ownershipOf(blocked, found, ownerTagsFor(blocked, this.clusterId), blocked.spec.name)), 'NotOwned only where the evidence does not prove the resource ours');
    this.objects.editMetadata(this.#kind, NAMESPACE, name, (metadata) => {
      metadata.annotations = { ...metadata.annotations, [Annotations.adopt]: 'true' };
    });
    const adopted = await this.reconcileUntil(object, 'Ready and Synced once adopted', isReadyAndSynced);
    const after = await this.observe(adopted);
    if (found.identity && after.identity) assert.deepEqual(after.identity, found.identity, 'adopted, not made again');
    return adopted;
  }

  /** One reconcile of the object, as a worker runs it. */
  async reconcile(object: ManagedResource, options: { abortAfterFirstWrite?: boolean } = {}): Promise<void> {
    const controller = new AbortController();
    if (options.abortAfterFirstWrite) this.#abortAfterWrite = controller;
    try {
      await this.#reconciler.reconcile({ namespace: NAMESPACE, name: object.metadata.name ?? '', signal: controller.signal });
    } finally {
      this.#abortAfterWrite = undefined;
    }
  }

  /** Reconciles (as the queue would, again and again) until the stored object satisfies `done`. */
  async reconcileUntil(object: ManagedResource, what: string, done: (stored: ManagedResource | undefined) => boolean): Promise<ManagedResource> {
    const name = object.metadata.name ?? '';
    let last: ManagedResource | undefined;
    await waitFor(`${what} (${this.#kind} ${name})`, async () => {
      await this.reconcile(object);
      last = this.objects.peek(this.#kind, NAMESPACE, name);
      return done(last);
    }, this.timeoutMs, 100).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}; last status: ${JSON.stringify(last?.status)}`);
    });
    return last as ManagedResource;
  }

  async deleteAndConfirmGone(object: ManagedResource): Promise<void> {
    const stored = this.objects.peek(this.#kind, NAMESPACE, object.metadata.name ?? '') ?? object;
    this.objects.markDeleted(this.#kind, NAMESPACE, object.metadata.name ?? '');
    await this.reconcileUntil(object, 'the object released', (o) => o === undefined);
    assert.equal((await this.observe(stored)).exists, false, `${stored.spec.name} is gone from the cloud: no leak`);
  }

  #access(): { providerConfig: ProviderConfig | undefined; credentials: Readonly<Record<string, string>> | undefined } {
    return { providerConfig: this.lookups.providerConfigs.get('default'), credentials: this.lookups.secrets.get(`${SECRET.namespace}/${SECRET.name}`) };
  }

  #setAccess(access: { providerConfig: ProviderConfig | undefined; credentials: Readonly<Record<string, string>> | undefined }): void {
    if (access.providerConfig) this.lookups.providerConfigs.set('default', access.providerConfig);
    if (access.credentials) this.lookups.secrets.set(`${SECRET.namespace}/${SECRET.name}`, access.credentials);
    else this.lookups.secrets.delete(`${SECRET.namespace}/${SECRET.name}`);
  }

  restoreAccess(): void {
    this.#setAccess({ providerConfig: withSecret(this.#backend.providerConfig, this.#backend.credentials), credentials: this.#backend.credentials });
  }

  /** Switches to the backend's access without evidence; false when it has none. */
  useAccessWithoutEvidence(): boolean {
    const limited = this.#backend.accessWithoutEvidence?.();
    if (!limited) return false;
    const providerConfig = limited.providerConfig ?? this.#backend.providerConfig;
    const credentials = limited.credentials ?? this.#backend.credentials;
    this.#setAccess({ providerConfig: withSecret(providerConfig, credentials), credentials });
    return true;
  }

  denyAccess(): void {
    const denied = this.#backend.deniedAccess();
    const providerConfig = denied.providerConfig ?? this.#backend.providerConfig;
    const credentials = denied.credentials ?? this.#backend.credentials;
    this.#setAccess({ providerConfig: withSecret(providerConfig, credentials), credentials });
  }

  #foreignResource(externalName: string): ManagedResource {
    return this.resource(externalName, 'someone-else');
  }

  #foreignTags(resource: ManagedResource): Record<string, string> {
    return ownerTagsFor(resource, `another-cluster-${randomUUID().slice(0, 6)}`);
  }

  async createForeign(externalName: string): Promise<void> {
    if (this.#backend.createForeign) return await this.#backend.createForeign(externalName);
    const resource = this.#foreignResource(externalName);
    const client = await this.client(resource, this.#foreignTags(resource));
    await client.create(resource, this.call());
    await this.settle(client, resource);
  }

  async observeForeign(externalName: string): Promise<Observation> {
    return await this.observe(this.#foreignResource(externalName));
  }

  async deleteForeign(externalName: string): Promise<void> {
    if (this.#backend.deleteForeign) return await this.#backend.deleteForeign(externalName);
    const resource = this.#foreignResource(externalName);
    await (await this.client(resource, this.#foreignTags(resource))).delete(resource, this.call());
  }

  /** Best effort: deletes what the cases made, so a shared backend is left as found. */
  async cleanUp(): Promise<void> {
    this.restoreAccess();
    for (const name of this.#created) {
      const resource = this.resource(name, 'cleanup');
      try {
        await (await this.client(resource)).delete({ ...resource, spec: { ...resource.spec, forceDelete: true } } as ManagedResource, this.call());
      } catch {
        // already gone, or blocked: nothing more the kit can do
      }
    }
  }
}

/** The plugin with its clients' probe hidden, so the engine observes on delete. */
function withoutProbe(plugin: ProviderPlugin, kind: ManagedKindName): ProviderPlugin {
  const connector = plugin.connectors[kind] as Connector | undefined;
  if (!connector) return plugin;
  const observing: Connector = {
    connect: async (resource, context) => {
      const client = await connector.connect(resource, context);
      const release = client.release?.bind(client);
      return {
        observe: (r, call) => client.observe(r, call),
        create: (r, call) => client.create(r, call),
        update: (r, observation, call) => client.update(r, observation, call),
        delete: (r, call) => client.delete(r, call),
        ...(release ? { release } : {}),
      };
    },
  };
  return { ...plugin, connectors: { ...plugin.connectors, [kind]: observing } };
}

/** An error as the engine tells errors apart: its class and code. */
function describeError(error: unknown): string {
  const code = error instanceof ProviderError ? ` ${error.code ?? ''}` : '';
  return `${error instanceof Error ? error.constructor.name : typeof error}${code}`;
}

/** The ProviderConfig pointing at the kit's credentials Secret when there are credentials. */
/** Whether a resource carries evidence of whose it is beyond k8or's record of its create: all its owner tags, or an identity. */
function hasEvidence(found: OwnershipFacts, expected: Readonly<Record<string, string>>): boolean {
  return ownerTagsMatch(found, expected) || (found.identity !== undefined && Object.keys(found.identity).length > 0);
}

function withSecret(providerConfig: ProviderConfig, credentials: Record<string, string> | undefined): ProviderConfig {
  const copy = structuredClone(providerConfig);
  copy.metadata = { ...copy.metadata, name: 'default' };
  if (credentials) copy.spec.credentials = { source: 'Secret', secretRef: { ...SECRET } };
  return copy;
}

function mapKeys(value: unknown, order: (keys: string[]) => string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => mapKeys(item, order));
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return Object.fromEntries(order(Object.keys(record)).map((key) => [key, mapKeys(record[key], order)]));
  }
  return value;
}

/** The resource with every object's keys in reverse order. */
function reverseKeys(resource: ManagedResource): ManagedResource {
  return { ...resource, spec: mapKeys(resource.spec, (keys) => [...keys].reverse()) } as ManagedResource;
}

/** The resource with every object's keys sorted, as kubectl and Go servers send them. */
function sortKeys(resource: ManagedResource): ManagedResource {
  return { ...resource, spec: mapKeys(resource.spec, (keys) => [...keys].sort()) } as ManagedResource;
}

/** Every string inside a value (object values, array items), for the no-credential checks. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

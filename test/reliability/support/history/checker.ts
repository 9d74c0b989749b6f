// The checker of a history, as Jepsen's are: it reads the clouds directly, the API server's watch and
// the recording proxies' log of every cloud call the operator made, and holds k8or's promises over the
// whole history:
//  1. no resource k8or did not create, or was not told to adopt, is written or deleted; every write is
//     traced to an object that names the resource;
//  2. every resource k8or created is owned by exactly one live object, or released by Retain: nothing leaks
//     (and none is made that its object's delete could never prove its own: a table through the account SAS
//     under deletion policy Delete);
//  3. no two objects own one resource;
//  4. Synced=True for generation G means a direct read matches G's spec;
//  5. no secret material in status, Events, logs or ConfigMaps;
//  6. a protected resource is never deleted, and a protection someone else set is never lowered;
// and one liveness check: every object the user deleted goes, unless a protection holds it.
import type { ProxiedApi, CloudCall } from '../cloud-proxy.ts';
import type { ManagedObject } from '../resources.ts';
import type { ForeignHand, CloudState } from './foreign.ts';
import { isWrite } from './actors.ts';
import type { Place } from './generator.ts';
import { objectKey, valueAt, type HistoryRecord, type UserObject, type Watched } from './record.ts';

export type Invariant = 1 | 2 | 3 | 4 | 5 | 6 | 'liveness';

export interface Violation {
  invariant: Invariant;
  message: string;
}

export interface CheckerInputs {
  record: HistoryRecord;
  places: readonly Place[];
  hands: (place: string) => ForeignHand;
  /** The operator's calls, each with its API and the place it acted in. */
  calls: () => Array<CloudCall & { api: ProxiedApi; place: string }>;
  /** The create and delete operations of each API, as the proxies name them. */
  creates: Partial<Record<ProxiedApi, string>>;
  deletes: Partial<Record<ProxiedApi, string>>;
  secrets: readonly string[];
  /** The first Bigtable instance (someone else's acts on Bigtable happen there). */
  firstInstance: string;
}

/** Secret material by its shape, whatever its value: SAS signatures, presigned URLs, private keys. */
const SECRET_SHAPES = [/[?&]sig=[A-Za-z0-9%+/=]{8,}/, /X-Amz-Signature=/i, /X-Goog-Signature=/i, /-----BEGIN [A-Z ]*PRIVATE KEY-----/];

const annotationOf = (object: ManagedObject, name: string): string | undefined => object.metadata.annotations?.[name];
const conditionOf = (object: ManagedObject, type: string): { status: string; reason?: string; message?: string } | undefined => object.status?.conditions?.find((c) => c.type === type);

export class Checker {
  readonly #in: CheckerInputs;
  readonly #violations: Violation[] = [];
  readonly #reported = new Set<string>();
  /** The latest watched state of each Bucket and Table, by kind/name. */
  readonly #latest = new Map<string, ManagedObject>();
  /** The engine's create markers on each object over time, as watched: `pending`, `succeeded` or `none`. */
  readonly #markers = new Map<string, Array<{ at: number; marker: string }>>();
  /**
   * Objects that said nothing proves the resource at their name is theirs while their own create was
   * never recorded as done (its outcome unknown on a kind without tags): by the rules k8or leaves that
   * resource, on delete too, and the user adopts it or not.
   */
  readonly #unproven = new Map<string, number>();
  /**
   * Objects k8or said, in a condition or in the Event of their delete, that the identity recorded at
   * the resource's creation is not found on it (replaced, or credentials that cannot read it).
   */
  readonly #identityNotFound = new Set<string>();
  /**
   * Objects whose delete deleted the resource under their name (their `DeletedExternalResource`
   * Event), and when: an object being deleted creates nothing more, so what stands under the name
   * at that place afterwards is not its own.
   */
  readonly #deletedTheirs = new Map<string, number>();
  /** Synced=True claims already checked (object and generation). */
  readonly #claimsChecked = new Set<string>();
  #reads: Promise<void> = Promise.resolve();
  /** Objects the watch showed Ready=True at least once, by kind/name. */
  readonly everReady = new Set<string>();
  /** Checks made, per invariant (the figures a run prints). */
  readonly checks: Record<string, number> = { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0, '6': 0, liveness: 0 };

  constructor(inputs: CheckerInputs) {
    this.#in = inputs;
  }

  get violations(): readonly Violation[] {
    return this.#violations;
  }

  #violate(invariant: Invariant, key: string, message: string): void {
    if (this.#reported.has(`${invariant}:${key}`)) return;
    this.#reported.add(`${invariant}:${key}`);
    this.#violations.push({ invariant, message });
  }

  /** The place an object's resource is in at `at` (a GCP Table's Bigtable instance comes from its ProviderConfig then). */
  placeOf(object: Pick<UserObject, 'cloud' | 'kind'>, providerConfig: string | undefined, at: number): string {
    const base = `${object.cloud}/${object.kind}`;
    if (object.cloud !== 'gcp' || object.kind !== 'Table') return base;
    const instance = valueAt(this.#in.record.bigtableInstance.get(providerConfig ?? '') ?? [], at)?.instance;
    return `${base}@${instance ?? this.#in.firstInstance}`;
  }

  // --- online: as the watch shows it ---------------------------------------------------------------

  onEvent(watched: Watched): void {
    const { object } = watched;
    this.#scanForSecrets(`${object.kind ?? 'object'} ${object.metadata?.name ?? '?'}`, { status: object.status, data: object.data, message: object.message, note: object.note });
    const about = (object as { involvedObject?: { kind?: string; name?: string } }).involvedObject;
    if ((object.kind as string) === 'Event' && about?.kind && about.name) {
      const aboutKey = objectKey(about.kind as Parameters<typeof objectKey>[0], about.name);
      const message = object.message ?? object.note ?? '';
      if (IDENTITY_NOT_FOUND.test(message)) this.#identityNotFound.add(aboutKey);
      // the delete left the resource: nothing proves it the object's (said in the Event, as a condition says it otherwise)
      if (object.reason === 'NotOwned' && /nothing proves/.test(message)) this.#unproven.set(aboutKey, watched.at);
      if (object.reason === 'DeletedExternalResource' && !this.#deletedTheirs.has(aboutKey)) this.#deletedTheirs.set(aboutKey, watched.at);
    }
    if (object.kind !== 'Bucket' && object.kind !== 'Table') return;
    const key = objectKey(object.kind, object.metadata.name);
    if (watched.type === 'DELETED') {
      this.#latest.delete(key);
      return;
    }
    this.#latest.set(key, object);
    if (conditionOf(object, 'Ready')?.status === 'True') this.everReady.add(key);
    const marker = annotationOf(object, 'k8or.io/create-succeeded') !== undefined ? 'succeeded' : annotationOf(object, 'k8or.io/create-pending') !== undefined ? 'pending' : 'none';
    const markers = this.#markers.get(key) ?? [];
    if (markers.at(-1)?.marker !== marker) markers.push({ at: watched.at, marker });
    this.#markers.set(key, markers);
    const notOwned = object.status?.conditions?.some((c) => c.reason === 'NotOwned' && /nothing proves/.test(c.message ?? ''));
    if (notOwned) this.#unproven.set(key, watched.at);
    if (object.status?.conditions?.some((c) => c.reason === 'NotOwned' && IDENTITY_NOT_FOUND.test(c.message ?? ''))) this.#identityNotFound.add(key);
    this.#twoOwners(object, watched.at);
    this.#claim(object, watched.at);
  }

  #scanForSecrets(where: string, value: unknown): void {
    const text = JSON.stringify(value ?? '');
    this.checks['5']!++;
    for (const secret of this.#in.secrets) if (secret.length >= 8 && text.includes(secret)) this.#violate(5, `${where}:${secret.slice(0, 6)}`, `${where} holds a credential (${secret.slice(0, 4)}…)`);
    for (const shape of SECRET_SHAPES) {
      const found = shape.exec(text);
      if (found) this.#violate(5, `${where}:${shape.source}`, `${where} holds secret material: ${found[0].slice(0, 12)}…`);
    }
  }

  /** An object owns its resource once the engine recorded the create, or reports it Ready. */
  #owns(object: ManagedObject): boolean {
    return annotationOf(object, 'k8or.io/create-succeeded') !== undefined || conditionOf(object, 'Ready')?.status === 'True';
  }

  #placeOfObject(object: ManagedObject, at: number): string {
    const cloud = this.#in.record.objects.get(objectKey(object.kind, object.metadata.name))?.cloud;
    // the target is pinned at creation: a retargeted ProviderConfig does not move what the object owns
    const pinned = (object.status as { target?: { instance?: string } } | undefined)?.target?.instance;
    if (cloud === 'gcp' && object.kind === 'Table' && pinned) return `gcp/Table@${pinned}`;
    const providerConfig = (object.spec['providerConfigRef'] as { name?: string } | undefined)?.name;
    return cloud ? this.placeOf({ cloud, kind: object.kind }, providerConfig, at) : `?/${object.kind}`;
  }

  #twoOwners(object: ManagedObject, at: number): void {
    if (!this.#owns(object)) return;
    this.checks['3']!++;
    const place = this.#placeOfObject(object, at);
    const owners = [...this.#latest.values()].filter((other) => other.kind === object.kind && other.spec.name === object.spec.name && this.#owns(other) && this.#placeOfObject(other, at) === place && (place !== 'aws/Table' || sameRegion(object, other)));
    if (owners.length > 1) {
      const names = owners.map((o) => `${o.metadata.name}${annotationOf(o, 'k8or.io/adopt') === 'true' ? ' (adopt)' : ''}`).sort();
      this.#violate(3, `${place}/${object.spec.name}`, `${place} ${object.spec.name} is owned by ${names.join(' and ')} at once`);
    }
  }

  /** Synced=True at generation G: read the cloud and compare with G's spec (the object in the event is G's). */
  #claim(object: ManagedObject, at: number): void {
    const generation = object.metadata.generation;
    if (conditionOf(object, 'Synced')?.status !== 'True' || object.status?.observedGeneration !== generation || object.metadata.deletionTimestamp) return;
    if (annotationOf(object, 'k8or.io/paused') === 'true') return;
    const claim = `${object.kind}/${object.metadata.name}/${generation}`;
    if (this.#claimsChecked.has(claim)) return;
    this.#claimsChecked.add(claim);
    const place = this.#placeOfObject(object, at);
    const name = object.spec.name;
    if (!name || place.startsWith('azure/')) return;
    // a reconcile in flight when its ProviderConfig was retargeted may finish on the old target
    const providerConfig = (object.spec['providerConfigRef'] as { name?: string } | undefined)?.name ?? '';
    if ((this.#in.record.bigtableInstance.get(providerConfig) ?? []).some((edit) => edit.at > 0 && edit.at >= at - 5_000 && edit.at <= at)) return;
    // read at once, beside any other read: the next reconcile may repair what the claim hid
    const read = (async (): Promise<void> => {
      let found: CloudState | undefined;
      try {
        found = await this.#in.hands(place).read(name);
      } catch {
        return;
      }
      const readAt = Date.now();
      if (this.#disturbed(place, name, at, readAt)) return;
      const latest = this.#latest.get(objectKey(object.kind, object.metadata.name));
      if (latest && latest.metadata.generation !== generation) return;
      this.checks['4']!++;
      const problems = specProblems(object, found);
      if (problems.length > 0) this.#violate(4, claim, `${object.kind}/${object.metadata.name} said Synced=True for generation ${generation} while ${place} ${name} ${problems.join(', ')}`);
    })();
    this.#reads = Promise.all([this.#reads, read]).then(() => undefined);
  }

  /**
   * A read at `readAt` of a claim made at `claimedAt` proves nothing when someone else acted on the
   * resource shortly before the claim or since, or when an operator write sent before the read
   * finished landed after the claim (or has not been answered).
   */
  #disturbed(place: string, name: string, claimedAt: number, readAt: number): boolean {
    if (this.#in.record.others.some((act) => act.place === place && act.name === name && act.end >= claimedAt - 10_000 && act.start <= readAt)) return true;
    return this.#in.calls().some((call) => call.place === place && call.resource === name && isWrite(call.api, call.operation) && call.sentAt <= readAt && (call.answeredAt === 0 || call.answeredAt >= claimedAt));
  }

  /** After each step: a protection someone else set and never took off must still be on. */
  async afterStep(): Promise<void> {
    await this.#reads;
    const { others } = this.#in.record;
    const protectedNow = new Map<string, { place: string; name: string; since: number }>();
    for (const act of others) {
      if (!act.ok) continue;
      const key = `${act.place}/${act.name}`;
      if (act.op === 'protect') protectedNow.set(key, { place: act.place, name: act.name, since: act.end });
      if (act.op === 'unprotect' || act.op === 'delete' || act.op === 'create') protectedNow.delete(key);
    }
    for (const [key, { place, name, since }] of protectedNow) {
      this.checks['6']!++;
      let found: CloudState | undefined;
      try {
        found = await this.#in.hands(place).read(name);
      } catch {
        continue;
      }
      if (!found) this.#violate(6, `gone:${key}:${since}`, `${place} ${name}, deletion-protected by someone else, was deleted`);
      else if (found.deletionProtection === false) this.#violate(6, `lowered:${key}:${since}`, `${place} ${name}: the deletion protection someone else turned on is off`);
    }
  }

  // --- at the end -----------------------------------------------------------------------------------

  /**
   * Invariants 1 and 6 over the operator's cloud writes: each one against who made the resource it
   * wrote (someone else's acts and the operator's own creates and deletes, in time order) and the
   * objects that named it then.
   */
  checkWrites(): void {
    const { record } = this.#in;
    interface Event {
      at: number;
      from: number;
      by: 'k8or' | 'other';
      op: 'create' | 'delete' | 'protect' | 'unprotect' | 'write' | 'untag';
      tagged?: boolean;
      call?: CloudCall & { api: ProxiedApi; place: string };
    }
    const timelines = new Map<string, Event[]>();
    const push = (key: string, event: Event): void => {
      const list = timelines.get(key) ?? [];
      list.push(event);
      timelines.set(key, list);
    };
    for (const act of record.others) {
      if (!act.ok) continue;
      if (act.op === 'change') {
        if (this.#in.hands(act.place).changeReplacesOwnerTags === true) push(`${act.place}:${act.name}`, { at: act.end, from: act.start, by: 'other', op: 'untag' });
        continue;
      }
      push(`${act.place}:${act.name}`, { at: act.end, from: act.start, by: 'other', op: act.op, ...(act.tagged ? { tagged: true } : {}) });
    }
    for (const call of this.#in.calls()) {
      if (!call.ok || !call.resource || !isWrite(call.api, call.operation)) continue;
      const op = call.operation === this.#in.creates[call.api] ? 'create' : call.operation === this.#in.deletes[call.api] ? 'delete' : 'write';
      push(`${call.place}:${call.resource}`, { at: call.answeredAt, from: call.sentAt, by: 'k8or', op, call });
    }
    for (const [key, events] of timelines) {
      events.sort((a, b) => a.at - b.at);
      let creator: 'k8or' | 'other' | undefined;
      let tagged = false;
      let protectedByOther = false;
      for (const event of events) {
        if (event.by === 'other') {
          if (event.op === 'create') [creator, tagged, protectedByOther] = ['other', event.tagged === true, false];
          else if (event.op === 'delete') [creator, protectedByOther] = [undefined, false];
          // someone else's change that replaced the metadata took their owner tags with it
          else if (event.op === 'untag') tagged = false;
          else protectedByOther = event.op === 'protect';
          continue;
        }
        const call = event.call!;
        this.checks['1']!++;
        // a write whose time overlaps someone else's act on the same name cannot be ordered with it
        const overlaps = events.some((other) => other.by === 'other' && other.at >= event.from - 500 && other.from <= event.at + 500);
        const namers = [...record.objects.values()].filter((o) => o.externalName === call.resource && o.created <= event.at && this.placeOf(o, valueAt(o.providerConfig, event.from)?.name, event.from) === call.place);
        if (namers.length === 0) this.#violate(1, `untraced:${key}`, `${call.operation} on ${key} at ${iso(event.at)}: no object names it`);
        else if (creator === 'other' && !overlaps) {
          const adopting = namers.filter((o) => valueAt(o.adopt, event.from)?.on === true);
          const markers = namers.map((o) => {
            const timeline = this.#markers.get(objectKey(o.kind, o.name)) ?? [];
            const marker = valueAt(timeline, event.from)?.marker ?? 'none';
            const recorded = timeline.find((m) => m.marker === 'succeeded')?.at;
            // the engine recorded a create as done with no create call for it succeeding: a resource found at the name was taken for its own
            const ownCreate = events.some((e) => e.by === 'k8or' && e.op === 'create' && e.at >= o.created && (recorded === undefined || e.at <= recorded + 1_000));
            return `${o.name}: create ${marker}${marker === 'succeeded' && !ownCreate ? ' with no create call of its own succeeding' : ''}`;
          });
          if (adopting.length === 0) this.#violate(1, `foreign:${key}`, `${call.operation} on ${key} at ${iso(event.at)}: someone else made it, and no object was told to adopt it (named by ${markers.join(', ')})`);
          else if (tagged) this.#violate(1, `tagged:${key}`, `${call.operation} on ${key} at ${iso(event.at)}: adopted by ${adopting.map((o) => o.name).join(', ')} over another live cluster's owner tags`);
          // adopted as told: from here on it is k8or's, whatever the annotation says later
          else creator = 'k8or';
        }
        if (event.op === 'delete') {
          this.checks['6']!++;
          if (protectedByOther && !overlaps) this.#violate(6, `deleted:${key}`, `${call.operation} on ${key} at ${iso(event.at)}: someone else had turned its deletion protection on`);
          [creator, protectedByOther] = [undefined, false];
        }
        // where a create of an existing name fails (all but S3 in us-east-1), a second successful create
        // with no delete between made a second resource in another place: the first one is orphaned
        if (event.op === 'create' && creator === 'k8or' && call.api !== 's3') {
          this.checks['2']!++;
          this.#violate(2, `second:${key}`, `${call.operation} of ${key} succeeded at ${iso(event.at)} while k8or's earlier one still stands (a second resource for one name, the first left behind; named by ${namers.map((o) => `${o.name} on ${o.providerConfig.map((pc) => pc.name).join(' -> ')}`).join(', ')})`);
        }
        if (event.op === 'create' && call.place === 'azure/Table') this.#unprovableCreate(key, event.at, event.from, namers);
        if (event.op === 'create' && creator === undefined) creator = 'k8or';
      }
    }
  }

  /**
   * Invariant 2, before the fact: a table made through the SAS ProviderConfig can hold no identity, so
   * no delete could ever prove it the object's (k8or blocks such a delete); under deletion policy
   * Delete k8or must refuse the create (rule deletion-policy.needs-evidence). Not judged when a namer
   * moved between ProviderConfigs within 5 s of the create (the pass may have read the other one).
   */
  #unprovableCreate(key: string, at: number, from: number, namers: readonly UserObject[]): void {
    this.checks['2']!++;
    const settled = (o: UserObject): boolean => !o.providerConfig.slice(1).some((move) => Math.abs(move.at - from) < 5_000);
    if (namers.length === 0 || !namers.every((o) => settled(o) && !o.retain && valueAt(o.providerConfig, from)?.name === SAS_PROVIDER_CONFIG)) return;
    this.#violate(2, `unprovable:${key}`, `create of ${key} at ${iso(at)} through the SAS ProviderConfig under deletion policy Delete (named by ${namers.map((o) => o.name).join(', ')}): it can hold no identity, so no delete could prove it the object's`);
  }

  /**
   * After the user deleted every object: what is left in each place that k8or made must be held by
   * an object still there (a protection keeps it) or released by Retain; an object still there must
   * be held by a protection.
   */
  async checkAfterTeardown(runTag: string, remaining: readonly ManagedObject[]): Promise<void> {
    const { record } = this.#in;
    const now = Date.now();
    for (const object of remaining) {
      this.checks['liveness']!++;
      const reasons = (object.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`.slice(0, 200));
      if (!reasons.some((r) => /DeletionBlocked|protect|TargetChanged/i.test(r))) this.#violate('liveness', `stuck:${object.metadata.name}`, `${object.kind}/${object.metadata.name} still Terminating after every deletion: ${reasons.join('; ') || 'no conditions'}`);
    }
    const seenPlaces = new Set<string>();
    for (const place of this.#in.places) seenPlaces.add(place.place);
    for (const object of record.objects.values()) seenPlaces.add(this.placeOf(object, valueAt(object.providerConfig, now)?.name, now));
    for (const place of seenPlaces) {
      let names: string[];
      try {
        names = await this.#in.hands(place).names();
      } catch {
        continue;
      }
      for (const name of names.filter((n) => n.startsWith(`h${runTag}`))) {
        this.checks['2']!++;
        const lastOther = record.others.filter((act) => act.place === place && act.name === name && act.ok && (act.op === 'create' || act.op === 'delete')).at(-1);
        if (lastOther?.op === 'create') continue;
        const namers = [...record.objects.values()].filter((o) => o.externalName === name && [...o.providerConfig.map((pc) => this.placeOf(o, pc.name, pc.at)), this.placeOf(o, valueAt(o.providerConfig, now)?.name, now)].includes(place));
        if (namers.some((o) => o.retain)) continue;
        // a create whose outcome k8or never learned, on a kind with no tags: left by the rules, and the object said so
        // (of the objects that may have made it: one that started a create, its create-pending marker written
        // before the call, and not one whose delete deleted the resource at this place before)
        const makers = namers.filter((o) => {
          if (!this.#startedACreate(objectKey(o.kind, o.name))) return false;
          const deletedAt = this.#deletedTheirs.get(objectKey(o.kind, o.name));
          return deletedAt === undefined || this.placeOf(o, valueAt(o.providerConfig, deletedAt)?.name, deletedAt) !== place;
        });
        // (said after the create the object last recorded as done: a later create of its own was never proven)
        if (makers.length > 0 && makers.every((o) => this.#saidUnprovenSinceLastSuccess(objectKey(o.kind, o.name)))) continue;
        // An Azure table whose identity (an access policy) an account SAS cannot read: reached through the SAS
        // ProviderConfig at its delete, nothing proves it the object's, and k8or leaves it, saying so
        if (place === 'azure/Table' && namers.length > 0 && namers.every((o) => valueAt(o.providerConfig, now)?.name === SAS_PROVIDER_CONFIG && this.#identityNotFound.has(objectKey(o.kind, o.name)))) continue;
        if (remaining.some((object) => object.spec.name === name)) continue;
        const moves = namers.filter((o) => o.providerConfig.length > 1).map((o) => `${o.name} moved ${o.providerConfig.map((pc) => pc.name).join(' -> ')}`);
        const edits = [...record.bigtableInstance.entries()].filter(([, timeline]) => timeline.length > 1).map(([pc, timeline]) => `${pc} retargeted ${timeline.map((t) => t.instance).join(' -> ')}`);
        this.#violate(2, `leak:${place}/${name}`, `${place} ${name} is left with no object (made by k8or${namers.length ? ` for ${namers.map((o) => o.name).join(', ')}` : ''}, none with Retain)${[...moves, ...edits].length ? `; ${[...moves, ...edits].join('; ')}` : ''}`);
      }
    }
  }

  /** Whether the object was ever seen with a create marker (pending or succeeded): the engine writes one before any create call. */
  #startedACreate(key: string): boolean {
    return (this.#markers.get(key) ?? []).some((m) => m.marker !== 'none');
  }

  /** Whether the object said nothing proves the resource its own, later than any create it recorded as done. */
  #saidUnprovenSinceLastSuccess(key: string): boolean {
    const said = this.#unproven.get(key);
    if (said === undefined) return false;
    const succeeded = (this.#markers.get(key) ?? []).filter((m) => m.marker === 'succeeded').at(-1)?.at;
    return succeeded === undefined || succeeded < said;
  }

  /** Invariant 5 over the operator's own log lines. */
  scanLogs(where: string, text: string): void {
    this.#scanForSecrets(where, text);
  }

  async settled(): Promise<void> {
    await this.#reads;
  }
}

/**
 * Whether two AWS Tables' resources were made (or taken over) in one region, as pinned in
 * `status.target`: tables in two regions are two resources in AWS, which DynamoDB Local
 * (`-sharedDb`) keeps as one. Not judged (false) while either has no pinned region yet: the
 * take-over's status write, which pins it, follows its marker, and the next watch event judges the pair.
 */
function sameRegion(a: ManagedObject, b: ManagedObject): boolean {
  const region = (o: ManagedObject): string | undefined => (o.status as { target?: { region?: string } } | undefined)?.target?.region;
  return a === b || (region(a) !== undefined && region(a) === region(b));
}

/** What k8or says when the identity recorded at a resource's creation is not found on it (policy/ownership.ts). */
const IDENTITY_NOT_FOUND = /identity recorded at creation \([^)]*\) is not found on it/;
/** The Azure ProviderConfig with an account SAS (support/history/world.ts): it cannot read a table's access policies. */
const SAS_PROVIDER_CONFIG = 'history-azure-sas';

const iso = (at: number): string => new Date(at).toISOString().slice(11, 23);

/** How a direct read differs from what a spec asks (the fields the history edits, and protection). */
function specProblems(object: ManagedObject, found: CloudState | undefined): string[] {
  if (!found) return ['does not exist'];
  const spec = object.spec;
  const problems: string[] = [];
  if (object.kind === 'Bucket' && found.versioning !== undefined && found.versioning !== (spec['versioning'] === true)) problems.push(`has versioning ${found.versioning}, spec ${String(spec['versioning'])}`);
  if (object.kind === 'Table') {
    const ttl = spec['ttlAttribute'];
    if (typeof found.ttl === 'boolean' ? found.ttl !== Boolean(ttl) : found.ttl !== ttl) problems.push(`has TTL ${String(found.ttl)}, spec ${String(ttl)}`);
    if (found.deletionProtection !== undefined && found.deletionProtection !== (spec['deletionProtection'] === true)) problems.push(`has deletion protection ${found.deletionProtection}, spec ${String(spec['deletionProtection'] ?? false)}`);
  }
  return problems;
}

// The actors of a history, doing one step each: the user through the API server (the admin's client,
// as kubectl would), someone else through the cloud's SDK, the faults at the proxies, and the kills.
// Each step's outcome goes into the record; a step the system refuses (the webhook, the cloud) is an
// outcome too, never a failure of the suite.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultPlan } from '@k8or/local-clouds';
import { NAMESPACE, USER_NAMESPACE } from '../cluster.ts';
import type { ProxiedApi } from '../cloud-proxy.ts';
import { collectionPath, GROUP_VERSION, type ManagedObject } from '../resources.ts';
import type { Random } from '../seed.ts';
import { whileWebhookDown } from '../supervisor.ts';
import { otherClusterTags } from './foreign.ts';
import { describeStep, type Step } from './generator.ts';
import { objectKey, type HistoryRecord, type OtherAct } from './record.ts';
import { BIGTABLE_INSTANCES, STALL_MS, type HistoryWorld } from './world.ts';

const ANNOTATION = { adopt: 'k8or.io/adopt', protect: 'k8or.io/protect', paused: 'k8or.io/paused' } as const;
/** The operator's leader election Lease (the chart's K8OR_LEADER_ELECTION_ID default). */
const LEADER_LEASE = 'k8or-operator';
const leasePath = (name: string): string => `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/${name}`;

/** The cloud writes of each API, as the recording proxies name them: what counts as k8or writing. */
export function isWrite(api: ProxiedApi, operation: string): boolean {
  if (api === 'dynamodb') return /^(Create|Delete|Update|Tag|Untag|Restore)/.test(operation);
  if (api === 'bigtable') return /^(Create|Delete|Modify|Update|Drop|Undelete)/.test(operation);
  return /^(PUT|POST|PATCH|DELETE) /.test(operation);
}

export class Actors {
  readonly #world: HistoryWorld;
  readonly #record: HistoryRecord;
  /** What each object's spec was last set to by the user (to flip it). */
  readonly #specs = new Map<string, Record<string, unknown>>();
  /** The fault window each API is in (shares), so a scripted stall keeps it. */
  readonly #windows = new Map<ProxiedApi, { plan: FaultPlan; until: number }>();

  /** Which replica a kill hits, and which Lease a Lease loss takes, when there are several (sharded). */
  readonly #victims: Random;

  constructor(world: HistoryWorld, record: HistoryRecord, victims: Random) {
    this.#world = world;
    this.#record = record;
    this.#victims = victims;
  }

  async do(step: Step): Promise<void> {
    const started = Date.now();
    let outcome: string;
    try {
      outcome = await this.#do(step);
    } catch (error) {
      outcome = `refused: ${String(error).slice(0, 300)}`;
    }
    if (step.actor !== 'wait') this.#record.lines.push(`${new Date(started).toISOString()} ${describeStep(step)} -> ${outcome}`);
  }

  async #do(step: Step): Promise<string> {
    if (step.actor === 'other') return await this.#other(step);
    switch (step.op) {
      case 'wait':
        await sleep(step.ms);
        return 'ok';
      case 'apply':
        return await this.#apply(step);
      case 'patch':
        return await this.#patch(step.object, step.kind, step.round);
      case 'patchTwice': {
        const first = await this.#patch(step.object, step.kind, step.round);
        await sleep(150);
        return `${first}; ${await this.#patch(step.object, step.kind, step.round + 1000)}`;
      }
      case 'delete':
        return await this.#delete(step.object, step.kind);
      case 'annotate': {
        const value = step.on ? 'true' : null;
        await this.#user(() => this.#world.cluster.admin.patch(this.#path(step.kind, step.object), { metadata: { annotations: { [ANNOTATION[step.annotation]]: value } } }));
        const object = this.#record.objects.get(objectKey(step.kind, step.object));
        if (object && step.annotation === 'adopt') object.adopt.push({ at: Date.now(), on: step.on });
        return 'ok';
      }
      case 'move': {
        await this.#user(() => this.#world.cluster.admin.patch(this.#path(step.kind, step.object), { spec: { providerConfigRef: { name: step.providerConfig } } }));
        this.#record.objects.get(objectKey(step.kind, step.object))?.providerConfig.push({ at: Date.now(), name: step.providerConfig });
        return 'ok';
      }
      case 'editProviderConfig':
        return await this.#editProviderConfig(step);
      case 'before':
        this.#window(step.api, { throttle: step.share / 2, serverError: step.share / 2 }, step.ms);
        return 'ok';
      case 'after': {
        const proxy = this.#world.recording[step.api];
        // (Bigtable: a stall that reaches the emulator first, the nearest the gRPC proxy has)
        if (!proxy) return this.#stall(step.api, true);
        let left = step.count;
        proxy.failAfterEffect = (call) => isWrite(step.api, call.operation) && left-- > 0;
        return 'armed';
      }
      case 'timeout':
        return this.#stall(step.api, step.afterEffect);
      case 'kill': {
        const { operators, shards } = this.#world;
        const victim = operators.length > 1 ? this.#victims.int(0, operators.length - 1) : 0;
        const which = shards[victim] ? ` (shard ${shards[victim]})` : '';
        this.#record.disruptions.push({ at: Date.now(), what: `operator SIGKILL${which}` });
        await operators[victim]!.kill();
        return `killed${which}`;
      }
      case 'leaseLoss':
        return await this.#takeLease();
      case 'twinApply': {
        const [first, second] = await Promise.all([this.#apply(step.first), this.#apply(step.second)]);
        return `${first}; ${second}`;
      }
      case 'takenName': {
        const other = await this.#other({ actor: 'other', op: 'create', place: step.place, name: step.apply.externalName, tagged: step.tagged });
        return `someone else: ${other}; ${await this.#apply(step.apply)}`;
      }
      case 'contendedCreate': {
        // the first call (the observe that finds the name free) passes; the create and its retries are throttled
        this.#window(step.api, { throttle: 1, script: ['pass'] }, step.delayMs + 2_500);
        const applied = await this.#apply(step.apply);
        await sleep(step.delayMs);
        const other = await this.#other({ actor: 'other', op: 'create', place: step.place, name: step.apply.externalName, tagged: step.tagged });
        return `${applied}; someone else: ${other}`;
      }
    }
  }

  #path(kind: 'Bucket' | 'Table', name: string): string {
    return `${collectionPath(USER_NAMESPACE, kind)}/${name}`;
  }

  /** A user's call, again while no webhook serves (a kill), as kubectl's user would retry. */
  async #user<T>(call: () => Promise<T>): Promise<T> {
    return await whileWebhookDown(call, 60_000);
  }

  async #apply(step: Extract<Step, { op: 'apply' }>): Promise<string> {
    const spec: Record<string, unknown> = { name: step.externalName, providerConfigRef: { name: step.providerConfig }, deletionPolicy: step.retain ? 'Retain' : 'Delete' };
    if (step.kind === 'Table') spec['partitionKey'] = { name: 'id', type: 'string' };
    if (step.kind === 'Bucket' && step.cloud !== 'azure') spec['versioning'] = false;
    if (step.outputs) spec['writeOutputsTo'] = { name: `${step.object}-outputs` };
    const manifest: ManagedObject = {
      apiVersion: GROUP_VERSION,
      kind: step.kind,
      metadata: { name: step.object, namespace: USER_NAMESPACE, ...(step.adopt ? { annotations: { [ANNOTATION.adopt]: 'true' } } : {}) },
      spec,
    };
    await this.#user(() => this.#world.cluster.admin.create(collectionPath(USER_NAMESPACE, step.kind), manifest));
    const now = Date.now();
    this.#specs.set(objectKey(step.kind, step.object), spec);
    this.#record.objects.set(objectKey(step.kind, step.object), {
      kind: step.kind,
      cloud: step.cloud,
      name: step.object,
      externalName: step.externalName,
      created: now,
      retain: step.retain,
      adopt: [{ at: now, on: step.adopt }],
      providerConfig: [{ at: now, name: step.providerConfig }],
    });
    return 'created';
  }

  async #patch(object: string, kind: 'Bucket' | 'Table', round: number): Promise<string> {
    const record = this.#record.objects.get(objectKey(kind, object));
    const spec = this.#specs.get(objectKey(kind, object));
    if (!record || !spec) return 'unknown object';
    let change: Record<string, unknown>;
    if (kind === 'Bucket') change = record.cloud === 'azure' ? { labels: { round: String(round) } } : { versioning: spec['versioning'] !== true };
    else if (record.cloud === 'azure') return 'nothing to edit on an Azure table';
    else change = { ttlAttribute: spec['ttlAttribute'] ? null : `expires${round}` };
    await this.#user(() => this.#world.cluster.admin.patch(this.#path(kind, object), { spec: change }));
    for (const [field, value] of Object.entries(change)) {
      if (value === null) delete spec[field];
      else spec[field] = value;
    }
    return `patched ${JSON.stringify(change)}`;
  }

  async #delete(object: string, kind: 'Bucket' | 'Table'): Promise<string> {
    await this.#user(() => this.#world.cluster.admin.request('DELETE', this.#path(kind, object)));
    const record = this.#record.objects.get(objectKey(kind, object));
    if (record) record.deleteAsked = Date.now();
    return 'deletion asked';
  }

  async #editProviderConfig(step: Extract<Step, { op: 'editProviderConfig' }>): Promise<string> {
    const manifest = this.#world.providerConfigs.get(step.providerConfig);
    if (!manifest) return 'unknown ProviderConfig';
    const spec = manifest['spec'] as Record<string, unknown>;
    let change: Record<string, unknown>;
    if (step.cloud === 'aws') change = { region: spec['region'] === 'us-west-2' ? 'eu-west-1' : 'us-west-2' };
    else if (step.cloud === 'gcp') {
      if (!this.#world.faults.bigtable) return 'no Bigtable in this run';
      const instance = spec['bigtableInstance'] === BIGTABLE_INSTANCES[0] ? BIGTABLE_INSTANCES[1] : BIGTABLE_INSTANCES[0];
      // the endpoint goes with the instance: each instance's calls pass its own proxy
      change = { bigtableInstance: instance, endpoints: { ...(spec['endpoints'] as Record<string, unknown>), table: this.#world.bigtableProxies.get(instance)?.endpoint } };
    } else return 'nothing to retarget on Azure (one storage account)';
    await this.#user(() => this.#world.cluster.admin.patch(`/apis/k8or.io/v1alpha1/providerconfigs/${step.providerConfig}`, { spec: change }));
    Object.assign(spec, change);
    if (typeof change['bigtableInstance'] === 'string') {
      const timeline = this.#record.bigtableInstance.get(step.providerConfig) ?? [];
      timeline.push({ at: Date.now(), instance: change['bigtableInstance'] });
      this.#record.bigtableInstance.set(step.providerConfig, timeline);
    }
    return `edited ${JSON.stringify(change)}`;
  }

  async #other(step: Extract<Step, { actor: 'other' }>): Promise<string> {
    const hand = this.#world.others.at(step.place);
    const act = async (op: OtherAct['op'], doIt: () => Promise<void>, tagged?: boolean): Promise<string> => {
      const entry: OtherAct = { place: step.place, name: step.name, op, start: Date.now(), end: 0, ok: false, ...(tagged ? { tagged } : {}) };
      this.#record.others.push(entry);
      try {
        await doIt();
        entry.ok = true;
        return `${op} ok`;
      } catch (error) {
        entry.error = String(error).slice(0, 200);
        return `${op} refused (${entry.error})`;
      } finally {
        entry.end = Date.now();
      }
    };
    switch (step.op) {
      case 'create':
        return await act('create', () => hand.create(step.name, step.tagged ? otherClusterTags(step.name) : undefined), step.tagged);
      case 'delete':
        return await act('delete', () => hand.remove(step.name));
      case 'recreate':
        return `${await act('delete', () => hand.remove(step.name))}, then ${await act('create', () => hand.create(step.name))}`;
      case 'protect':
        return await act('protect', () => hand.protect(step.name, true));
      case 'unprotect':
        return await act('unprotect', () => hand.protect(step.name, false));
      case 'change':
        return await act('change', () => hand.change(step.name));
    }
  }

  /** Throttles and 5xx at `api` for `ms` (the proxy answers them before the backend sees the call). */
  #window(api: ProxiedApi, plan: FaultPlan, ms: number): void {
    const proxies = this.#world.faultProxiesOf(api);
    const until = Date.now() + ms;
    this.#windows.set(api, { plan, until });
    for (const proxy of proxies) proxy.setFaults(plan);
    setTimeout(() => {
      if (this.#windows.get(api)?.until !== until) return;
      this.#windows.delete(api);
      for (const proxy of proxies) proxy.setFaults({});
    }, ms).unref();
  }

  /** The next call at `api` stalls past the reconcile deadline; the window it is in stays. */
  #stall(api: ProxiedApi, afterEffect: boolean): string {
    const proxies = this.#world.faultProxiesOf(api);
    if (proxies.length === 0) return 'no proxy';
    const window = this.#windows.get(api);
    for (const proxy of proxies) proxy.setFaults({ ...(window && window.until > Date.now() ? window.plan : {}), script: ['stall'], stallMs: STALL_MS, stallAfterForward: afterEffect ? 1 : 0 });
    return 'armed';
  }

  /**
   * Someone else takes the operator's Lease (a leader that cannot renew in time loses it); sharded,
   * the leader election Lease or one shard's Lease.
   */
  async #takeLease(): Promise<string> {
    const name = this.#world.shards.length > 0 ? this.#victims.pick([LEADER_LEASE, ...this.#world.shards]) : LEADER_LEASE;
    const lease = await this.#world.cluster.admin.get<{ spec: Record<string, unknown> }>(leasePath(name));
    if (!lease) return `no Lease ${name} yet`;
    const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    await this.#world.cluster.admin.update(leasePath(name), { ...lease, spec: { ...lease.spec, holderIdentity: 'history-suite-intruder', leaseDurationSeconds: 5, acquireTime: now, renewTime: now } });
    this.#record.disruptions.push({ at: Date.now(), what: `Lease ${name} taken` });
    return `Lease ${name} taken for 5 s`;
  }
}

/**
 * Admission through webhooks, as kube-apiserver runs it: every matching mutating webhook in order
 * (JSONPatch responses applied), then every matching validating webhook in parallel.
 */
import { randomUUID } from 'node:crypto';
import type { Operation as JsonPatchOperation } from 'fast-json-patch';
import type { Logger } from 'pino';
import type { KubeObject } from '../types.js';
import type { UserInfo } from '../auth/user.js';
import { isObject, stringField } from '../util.js';
import { ApiError, badRequest } from '../status.js';
import type { ObjectStore } from '../storage/store.js';
import { postAdmissionReview, WebhookCallError, type WebhookEndpoint } from './call.js';
import { WebhookClients } from './clients.js';
import { webhookMatcher, type AdmissionTarget, type Operation, type WebhookMatcher } from './match.js';
import { applyJsonPatchSharing } from './patch.js';

export interface AdmissionRequest {
  operation: Operation;
  group: string;
  version: string;
  kind: string;
  resource: string;
  subresource: string;
  namespaced: boolean;
  namespace: string;
  name: string;
  /** New object (CREATE, UPDATE); undefined for DELETE. */
  object?: KubeObject;
  /** Existing object (UPDATE, DELETE). */
  oldObject?: KubeObject;
  dryRun: boolean;
  /** CreateOptions / UpdateOptions / DeleteOptions. */
  options: KubeObject;
  user: UserInfo;
}

export interface MutationResult {
  object: KubeObject | undefined;
  warnings: string[];
}

export type ServiceResolver = (namespace: string, name: string, port: number) => string;

const MUTATING = 'admissionregistration.k8s.io/mutatingwebhookconfigurations';
const VALIDATING = 'admissionregistration.k8s.io/validatingwebhookconfigurations';

/** Webhook configurations are never sent to webhooks (the real server exempts them to avoid lock-outs). */
const EXEMPT = new Set([MUTATING, VALIDATING]);

export const defaultServiceResolver: ServiceResolver = (namespace, name, port) => `https://${name}.${namespace}.svc:${port}`;

function labelsOf(obj: KubeObject | undefined): Record<string, string> | undefined {
  if (!obj) return undefined;
  const meta = obj['metadata'];
  const labels = isObject(meta) ? meta['labels'] : undefined;
  const out: Record<string, string> = {};
  if (isObject(labels)) for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** What a stored webhook entry says, worked out once: stored objects are replaced, never changed, so identity is the version. */
interface CompiledWebhook {
  name: string;
  failurePolicy: string;
  sideEffects: string;
  matches: WebhookMatcher;
  /** Where to call it, or why it cannot be called. */
  endpoint: WebhookEndpoint | string;
}

export class AdmissionChain {
  private readonly clients = new WebhookClients();
  private readonly compiled = new WeakMap<KubeObject, CompiledWebhook>();

  constructor(
    private readonly store: ObjectStore,
    private readonly resolveService: ServiceResolver,
    private readonly logger: Logger,
  ) {}

  /** Closes the connections kept open to webhooks. */
  close(): void {
    this.clients.close();
  }

  /** Run mutating webhooks; returns the (possibly patched) object and their warnings. Throws a Status on denial. */
  async mutate(request: AdmissionRequest): Promise<MutationResult> {
    const warnings: string[] = [];
    let object = request.object;
    // Encoded again only when a webhook's patch changed the object the next one must see.
    let review: EncodedReview | undefined;
    for (const webhook of this.matching(MUTATING, request)) {
      if (!review || review.object !== object) review = encodeReview(object === request.object ? request : { ...request, object });
      const response = await this.call(webhook, review);
      if (!response) continue;
      warnings.push(...response.warnings);
      if (response.patch && object) object = applyWebhookPatch(webhook.name, object, response.patch, response.patchType);
    }
    return { object, warnings };
  }

  /** Run validating webhooks in parallel; returns their warnings. Throws a Status on denial. */
  async validate(request: AdmissionRequest): Promise<string[]> {
    const webhooks = this.matching(VALIDATING, request);
    if (webhooks.length === 0) return [];
    // They all see the same request: encoded once.
    const review = encodeReview(request);
    const responses = await Promise.all(webhooks.map((w) => this.call(w, review)));
    return responses.flatMap((r) => r?.warnings ?? []);
  }

  private matching(configKey: string, request: AdmissionRequest): CompiledWebhook[] {
    const resourceKey = `${request.group}/${request.resource}`;
    if (EXEMPT.has(resourceKey)) return [];
    const configs = this.store.list(configKey);
    if (configs.length === 0) return [];
    const isNamespace = resourceKey === '/namespaces';
    let namespaceLabels: Record<string, string> | undefined;
    if (isNamespace) namespaceLabels = labelsOf(request.object ?? request.oldObject);
    else if (request.namespaced) namespaceLabels = labelsOf(this.store.get('/namespaces', '', request.namespace)) ?? {};
    const target: AdmissionTarget = {
      operation: request.operation,
      group: request.group,
      version: request.version,
      resource: request.resource,
      subresource: request.subresource,
      namespaced: request.namespaced,
      namespace: request.namespace,
      objectLabels: [labelsOf(request.object), labelsOf(request.oldObject)].filter((l): l is Record<string, string> => l !== undefined),
      isNamespace,
    };
    if (namespaceLabels) target.namespaceLabels = namespaceLabels;
    const out: CompiledWebhook[] = [];
    // configurations in name order, webhooks in their listed order (as the real server sorts them)
    for (const config of configs) {
      const webhooks = Array.isArray(config['webhooks']) ? config['webhooks'] : [];
      for (const entry of webhooks) {
        if (!isObject(entry)) continue;
        const w = this.compile(entry);
        if (!w.matches(target)) continue;
        // As kube-apiserver: a dry run through a webhook that may have side effects is refused, not skipped.
        if (request.dryRun && w.sideEffects !== 'None' && w.sideEffects !== 'NoneOnDryRun') throw badRequest(`admission webhook "${w.name}" does not support dry run`);
        out.push(w);
      }
    }
    return out;
  }

  private compile(webhook: KubeObject): CompiledWebhook {
    let compiled = this.compiled.get(webhook);
    if (!compiled) {
      compiled = {
        name: stringField(webhook, 'name') ?? '',
        failurePolicy: stringField(webhook, 'failurePolicy') ?? 'Fail',
        sideEffects: stringField(webhook, 'sideEffects') ?? 'Unknown',
        matches: webhookMatcher(webhook),
        endpoint: this.endpoint(webhook),
      };
      this.compiled.set(webhook, compiled);
    }
    return compiled;
  }

  private endpoint(webhook: KubeObject): WebhookEndpoint | string {
    const clientConfig = isObject(webhook['clientConfig']) ? webhook['clientConfig'] : {};
    const timeoutSeconds = typeof webhook['timeoutSeconds'] === 'number' ? webhook['timeoutSeconds'] : 10;
    const caBundle = stringField(clientConfig, 'caBundle');
    const endpoint: WebhookEndpoint = { url: '', timeoutMs: timeoutSeconds * 1000 };
    if (caBundle) endpoint.ca = Buffer.from(caBundle, 'base64').toString('utf8');
    const url = stringField(clientConfig, 'url');
    const service = isObject(clientConfig['service']) ? clientConfig['service'] : undefined;
    if (url) {
      endpoint.url = url;
    } else if (service) {
      const namespace = stringField(service, 'namespace') ?? 'default';
      const name = stringField(service, 'name') ?? '';
      const port = typeof service['port'] === 'number' ? service['port'] : 443;
      const path = stringField(service, 'path') ?? '/';
      endpoint.url = this.resolveService(namespace, name, port).replace(/\/$/, '') + (path.startsWith('/') ? path : `/${path}`);
      endpoint.expectedHost = `${name}.${namespace}.svc`;
    } else {
      return 'webhook has no clientConfig url or service';
    }
    return endpoint;
  }

  /** Call one webhook; undefined when it failed and failurePolicy is Ignore. Throws a Status on denial or Fail. */
  private async call(webhook: CompiledWebhook, review: EncodedReview): Promise<{ warnings: string[]; patch?: string; patchType?: string } | undefined> {
    const { name, failurePolicy, endpoint } = webhook;
    const uid = randomUUID();
    const failed = (why: string): undefined => {
      if (failurePolicy === 'Ignore') {
        this.logger.warn({ webhook: name, err: why }, 'webhook call failed; failurePolicy Ignore');
        return undefined;
      }
      throw new ApiError(500, 'InternalError', `Internal error occurred: failed calling webhook "${name}": ${why}`);
    };
    if (typeof endpoint === 'string') return failed(endpoint);
    let reply: unknown;
    try {
      reply = await postAdmissionReview(endpoint, review.body(uid), this.clients.connectionFor(endpoint));
    } catch (err) {
      return failed(err instanceof WebhookCallError ? err.message : `failed to call webhook: ${String(err)}`);
    }
    const response = isObject(reply) && isObject(reply['response']) ? reply['response'] : undefined;
    if (!response) return failed('received invalid webhook response: expected response in AdmissionReview');
    if (response['uid'] !== uid) return failed(`received invalid webhook response: expected response.uid="${uid}", got "${String(response['uid'])}"`);
    const warnings = Array.isArray(response['warnings']) ? response['warnings'].filter((w): w is string => typeof w === 'string') : [];
    if (response['allowed'] !== true) throw denial(name, isObject(response['status']) ? response['status'] : undefined, warnings);
    const result: { warnings: string[]; patch?: string; patchType?: string } = { warnings };
    const patch = stringField(response, 'patch');
    if (patch) {
      result.patch = patch;
      const patchType = stringField(response, 'patchType');
      if (patchType) result.patchType = patchType;
    }
    return result;
  }
}

/** A denial, worded as the real server words it: `admission webhook "NAME" denied the request: MESSAGE`. */
function denial(webhookName: string, status: Record<string, unknown> | undefined, warnings: string[]): ApiError {
  const deniedBy = `admission webhook "${webhookName}" denied the request`;
  const message = stringField(status, 'message');
  const reason = stringField(status, 'reason');
  const code = typeof status?.['code'] === 'number' && status['code'] >= 400 ? status['code'] : 400;
  const text = message ? `${deniedBy}: ${message}` : reason ? `${deniedBy}: ${reason}` : `${deniedBy} without explanation`;
  const err = new ApiError(code, reason ?? '', text, isObject(status?.['details']) ? (status['details'] as Record<string, unknown>) : undefined);
  err.warnings = warnings;
  return err;
}

function applyWebhookPatch(name: string, object: KubeObject, patchBase64: string, patchType: string | undefined): KubeObject {
  if (patchType !== undefined && patchType !== 'JSONPatch') {
    throw new ApiError(500, 'InternalError', `Internal error occurred: failed calling webhook "${name}": unsupported patch type "${patchType}"`);
  }
  try {
    const ops = JSON.parse(Buffer.from(patchBase64, 'base64').toString('utf8')) as JsonPatchOperation[];
    return applyJsonPatchSharing(object, ops);
  } catch (err) {
    throw new ApiError(500, 'InternalError', `Internal error occurred: failed calling webhook "${name}": failed to apply patch: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** An AdmissionReview serialized once for every webhook call it goes out on; each call has a uid of its own, as in kube-apiserver. */
interface EncodedReview {
  /** The object it carries, to tell whether a patch since then calls for a new encoding. */
  object: KubeObject | undefined;
  body(uid: string): string;
}

const REVIEW_HEAD = '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":';

function encodeReview(r: AdmissionRequest): EncodedReview {
  const kind = { group: r.group, version: r.version, kind: r.kind };
  const resource = { group: r.group, version: r.version, resource: r.resource };
  const request: Record<string, unknown> = {
    kind,
    resource,
    requestKind: kind,
    requestResource: resource,
    name: r.name,
    operation: r.operation,
    userInfo: r.user,
    object: r.object ?? null,
    oldObject: r.oldObject ?? null,
    dryRun: r.dryRun,
    options: r.options,
  };
  if (r.namespace) request['namespace'] = r.namespace;
  if (r.subresource) {
    request['subResource'] = r.subresource;
    request['requestSubResource'] = r.subresource;
  }
  // The request's fields after its uid: `"kind":...}`, closed by the review's own brace.
  const rest = JSON.stringify(request).slice(1);
  return { object: r.object, body: (uid) => `${REVIEW_HEAD}${JSON.stringify(uid)},${rest}}` };
}

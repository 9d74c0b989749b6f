import { randomUUID } from 'node:crypto';
import jsonpatch from 'fast-json-patch';
import type { AdmissionResponse, AdmissionReview, Operation } from '@k8or/webhook';
import type { HttpsClient } from './https-client.ts';

const PLURALS: Record<string, string> = { Bucket: 'buckets', Table: 'tables', ProviderConfig: 'providerconfigs' };

/** An AdmissionReview v1 request as kube-apiserver builds it. */
export function reviewOf(operation: Operation, object: object | null, oldObject?: object | null, options: { dryRun?: boolean } = {}): AdmissionReview {
  const subject = (object ?? oldObject ?? {}) as { kind?: string; metadata?: { name?: string; namespace?: string } };
  const kind = subject.kind ?? 'Bucket';
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: { group: 'k8or.io', version: 'v1alpha1', kind },
      resource: { group: 'k8or.io', version: 'v1alpha1', resource: PLURALS[kind] ?? 'buckets' },
      name: subject.metadata?.name,
      ...(subject.metadata?.namespace ? { namespace: subject.metadata.namespace } : {}),
      operation,
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
      object,
      oldObject: oldObject ?? null,
      dryRun: options.dryRun ?? false,
    },
  };
}

/** Sends a review to /validate or /mutate and returns its response, checking the envelope on the way. */
export async function send(client: HttpsClient, webhook: 'validate' | 'mutate', review: AdmissionReview): Promise<AdmissionResponse> {
  const answer = await client.post(`/${webhook}`, review);
  if (answer.status !== 200) throw new Error(`${webhook} answered ${answer.status}: ${answer.text}`);
  const body = answer.json() as AdmissionReview;
  if (body.apiVersion !== 'admission.k8s.io/v1' || body.kind !== 'AdmissionReview' || !body.response) throw new Error(`not an AdmissionReview: ${answer.text}`);
  if (body.response.uid !== review.request?.uid) throw new Error('response uid differs from the request uid');
  return body.response;
}

/** Decodes the JSONPatch of a mutating response (empty when none). */
export function patchOf(response: AdmissionResponse): jsonpatch.Operation[] {
  if (!response.patch) return [];
  if (response.patchType !== 'JSONPatch') throw new Error(`unexpected patchType ${response.patchType}`);
  return JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as jsonpatch.Operation[];
}

/** Applies the response's patch the way kube-apiserver does (validating every operation) and returns the new object. */
export function applyPatch<T>(object: T, response: AdmissionResponse): T {
  return jsonpatch.applyPatch(structuredClone(object), patchOf(response), true, false).newDocument;
}

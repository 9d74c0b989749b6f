import { GROUP, KINDS, VERSION } from '@k8or/api';
import type { V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';

/** Default names of the two webhook configurations. */
export const WEBHOOK_CONFIGURATION_NAMES = { validating: 'k8or-validating-webhook', mutating: 'k8or-mutating-webhook' } as const;

export interface ServiceReference {
  namespace: string;
  name: string;
  port?: number;
}

export interface WebhookConfigurationsOptions {
  /** Base URL of the webhook (`https://host:port`), for a webhook outside the cluster (or the sandbox). */
  url?: string;
  /** The in-cluster Service in front of the webhook; used when `url` is not given. */
  service?: ServiceReference;
  /** PEM of the CA that signed the serving certificate (plain text; encoded here). Omit when cert-manager's CA injector fills it. */
  caBundle?: string;
  names?: { validating?: string; mutating?: string };
  timeoutSeconds?: number;
}

export interface WebhookConfigurations {
  validating: V1ValidatingWebhookConfiguration;
  mutating: V1MutatingWebhookConfiguration;
}

/**
 * The ValidatingWebhookConfiguration and MutatingWebhookConfiguration that
 * route k8or's kinds through the webhook: validation of Bucket, Table and
 * ProviderConfig on CREATE, UPDATE and DELETE (DELETE for the protection and
 * orphan guards), defaulting of Bucket and Table on CREATE and UPDATE. Both
 * have no side effects, speak AdmissionReview v1 only, fail closed and match
 * equivalent versions.
 */
export function webhookConfigurations(options: WebhookConfigurationsOptions): WebhookConfigurations {
  if (!options.url && !options.service) throw new Error('webhookConfigurations needs a url or a service');
  const clientConfig = (path: string): Record<string, unknown> => ({
    ...(options.url
      ? { url: `${options.url.replace(/\/+$/, '')}${path}` }
      : { service: { namespace: options.service?.namespace, name: options.service?.name, port: options.service?.port ?? 443, path } }),
    ...(options.caBundle ? { caBundle: Buffer.from(options.caBundle).toString('base64') } : {}),
  });
  const common = {
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    timeoutSeconds: options.timeoutSeconds ?? 5,
  };
  const rule = (plurals: string[], operations: string[]): Record<string, unknown> => ({
    apiGroups: [GROUP],
    apiVersions: [VERSION],
    resources: plurals,
    operations,
    scope: '*',
  });
  const managed = [KINDS.Bucket.plural, KINDS.Table.plural];
  return {
    validating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: options.names?.validating ?? WEBHOOK_CONFIGURATION_NAMES.validating, labels: { 'app.kubernetes.io/name': 'k8or-webhook' } },
      webhooks: [
        {
          name: 'validate.k8or.io',
          clientConfig: clientConfig('/validate'),
          rules: [rule([...managed, KINDS.ProviderConfig.plural], ['CREATE', 'UPDATE', 'DELETE'])],
          ...common,
        },
      ],
    } as V1ValidatingWebhookConfiguration,
    mutating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: options.names?.mutating ?? WEBHOOK_CONFIGURATION_NAMES.mutating, labels: { 'app.kubernetes.io/name': 'k8or-webhook' } },
      webhooks: [
        {
          name: 'default.k8or.io',
          clientConfig: clientConfig('/mutate'),
          rules: [rule(managed, ['CREATE', 'UPDATE'])],
          reinvocationPolicy: 'IfNeeded',
          ...common,
        },
      ],
    } as V1MutatingWebhookConfiguration,
  };
}

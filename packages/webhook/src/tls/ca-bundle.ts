import { KubeRest, type KubeAccess } from '@k8or/core';
import type { V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { WebhookConfigurations } from '../manifests.js';

export interface CaBundleTargets {
  /** Name of the ValidatingWebhookConfiguration to patch. */
  validating?: string;
  /** Name of the MutatingWebhookConfiguration to patch. */
  mutating?: string;
  /**
   * Register mode: create these configurations (with the caBundle) when they do not exist yet, and
   * point existing ones at this server (their `clientConfig` url or service), as a restarted server
   * listens elsewhere. Without it a missing configuration is an error and only the caBundle changes.
   */
  create?: WebhookConfigurations;
}

type AnyConfiguration = V1ValidatingWebhookConfiguration | V1MutatingWebhookConfiguration;

/**
 * Writes the CA into `clientConfig.caBundle` of every webhook in the named
 * configurations (read, set, replace; retried on conflicts), creating them
 * from `create` when missing. Run at start-up in self-signed mode, so
 * kube-apiserver trusts the certificate this process just made.
 */
export async function injectCaBundle(kubeConfig: KubeAccess, caPem: string, targets: CaBundleTargets, logger: Logger): Promise<void> {
  const api = new KubeRest(kubeConfig, { userAgent: 'k8or-webhook' });
  try {
    await inject(api, caPem, targets, logger);
  } finally {
    api.close();
  }
}

/** The admission registration API's path of a webhook configuration. */
const configurationPath = (plural: 'validatingwebhookconfigurations' | 'mutatingwebhookconfigurations', name?: string): string =>
  `/apis/admissionregistration.k8s.io/v1/${plural}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;

async function inject(api: KubeRest, caPem: string, targets: CaBundleTargets, logger: Logger): Promise<void> {
  const caBundle = Buffer.from(caPem).toString('base64');
  const withCa = <T extends AnyConfiguration>(config: T, registered?: AnyConfiguration): T => {
    const copy = structuredClone(config);
    for (const webhook of copy.webhooks ?? []) {
      const target = registered?.webhooks?.find((w) => w.name === webhook.name)?.clientConfig;
      const where = target ? { ...(target.url ? { url: target.url } : {}), ...(target.service ? { service: target.service } : {}) } : webhook.clientConfig;
      webhook.clientConfig = { ...where, caBundle };
    }
    return copy;
  };
  const validatingName = targets.validating ?? targets.create?.validating.metadata?.name;
  const mutatingName = targets.mutating ?? targets.create?.mutating.metadata?.name;
  if (validatingName) {
    await upsert(
      validatingName,
      () => api.get<V1ValidatingWebhookConfiguration>(configurationPath('validatingwebhookconfigurations', validatingName)),
      (body) => api.update<V1ValidatingWebhookConfiguration>(configurationPath('validatingwebhookconfigurations', validatingName), withCa(body, targets.create?.validating)),
      targets.create ? () => api.create<V1ValidatingWebhookConfiguration>(configurationPath('validatingwebhookconfigurations'), withCa(targets.create!.validating)) : undefined,
    );
    logger.info({ name: validatingName }, 'caBundle set on ValidatingWebhookConfiguration');
  }
  if (mutatingName) {
    await upsert(
      mutatingName,
      () => api.get<V1MutatingWebhookConfiguration>(configurationPath('mutatingwebhookconfigurations', mutatingName)),
      (body) => api.update<V1MutatingWebhookConfiguration>(configurationPath('mutatingwebhookconfigurations', mutatingName), withCa(body, targets.create?.mutating)),
      targets.create ? () => api.create<V1MutatingWebhookConfiguration>(configurationPath('mutatingwebhookconfigurations'), withCa(targets.create!.mutating)) : undefined,
    );
    logger.info({ name: mutatingName }, 'caBundle set on MutatingWebhookConfiguration');
  }
}

/** `read` answers undefined for a configuration that does not exist. */
async function upsert<T extends AnyConfiguration>(name: string, read: () => Promise<T | undefined>, replace: (current: T) => Promise<T>, create: (() => Promise<T>) | undefined): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      const current = await read();
      if (current === undefined) {
        if (!create) throw new Error('it does not exist (and no manifest was given to create it)');
        await create();
        return;
      }
      await replace(current);
      return;
    } catch (error) {
      const status = statusOf(error);
      if ((status === 409 || status === 404) && attempt < 5) continue;
      throw new Error(`cannot set caBundle on webhook configuration ${name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

function statusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

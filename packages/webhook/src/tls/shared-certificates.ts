import { KubeApiError, requestJson, resourcePath } from '@k8or/core';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { GeneratedCertificates } from './self-signed.js';

/** Where the replicas of one webhook keep the CA and serving certificate they share. */
export interface SharedCertificateSecret {
  namespace: string;
  name: string;
}

interface Secret {
  data?: Record<string, string>;
}

const decode = (secret: Secret, key: string, where: string): string => {
  const value = secret.data?.[key];
  if (!value) throw new Error(`Secret ${where} has no ${key}; delete it and a replica makes a new one`);
  return Buffer.from(value, 'base64').toString('utf8');
};

/**
 * The self-signed CA and serving certificate every replica of the webhook serves. The caBundle of
 * the webhook configurations can hold one CA, and the webhook Service sends each call to any
 * replica, so the replicas must share theirs: the first to start makes them and keeps them in a
 * `kubernetes.io/tls` Secret (with `ca.crt`); the others read that Secret. Two replicas starting
 * at once both try to create it; the one that gets 409 AlreadyExists reads the winner's.
 */
export async function sharedCertificates(
  kubeConfig: KubeConfig,
  secret: SharedCertificateSecret,
  generate: () => GeneratedCertificates,
  logger: Logger,
): Promise<GeneratedCertificates> {
  const where = `${secret.namespace}/${secret.name}`;
  const path = `${resourcePath('', 'v1', 'secrets', secret.namespace)}/${encodeURIComponent(secret.name)}`;
  const read = async (): Promise<GeneratedCertificates | undefined> => {
    try {
      const found = (await requestJson(kubeConfig, 'GET', path, { userAgent: 'k8or-webhook' })) as Secret;
      return { certPem: decode(found, 'tls.crt', where), keyPem: decode(found, 'tls.key', where), caPem: decode(found, 'ca.crt', where) };
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 404) return undefined;
      throw error;
    }
  };
  const existing = await read();
  if (existing) {
    logger.info({ secret: where }, 'serving the webhook certificate another replica made');
    return existing;
  }
  const generated = generate();
  const base64 = (text: string): string => Buffer.from(text).toString('base64');
  try {
    await requestJson(kubeConfig, 'POST', resourcePath('', 'v1', 'secrets', secret.namespace), {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: secret.name, namespace: secret.namespace, labels: { 'app.kubernetes.io/managed-by': 'k8or' } },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': base64(generated.certPem), 'tls.key': base64(generated.keyPem), 'ca.crt': base64(generated.caPem) },
      },
      userAgent: 'k8or-webhook',
    });
    logger.info({ secret: where }, 'made the webhook certificate the replicas share');
    return generated;
  } catch (error) {
    if (!(error instanceof KubeApiError && error.status === 409)) throw error;
    const winner = await read();
    if (!winner) throw new Error(`Secret ${where} was created by another replica and is gone again`, { cause: error });
    logger.info({ secret: where }, 'serving the webhook certificate another replica made');
    return winner;
  }
}

// The manifests of examples/ as a user applies them, and an API server with k8or's CRDs to apply them to.
import { readFileSync } from 'node:fs';
import { after, before } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { allCrds } from '@k8or/api';
import { KubeRest } from '@k8or/core';
import { startSandbox } from '@k8or/apiserver';

const EXAMPLES = new URL('../../../examples/', import.meta.url);

/** The documents of `examples/<directory>/<file>`, in order. */
export function loadExample(directory: string, file: string): unknown[] {
  return parseAllDocuments(readFileSync(new URL(`${directory}/${file}`, EXAMPLES), 'utf8')).map((document) => document.toJSON() as unknown);
}

export interface CrdSandbox {
  /** A client of the cluster's admin. */
  user: KubeRest;
  stop(): Promise<void>;
}

/** The embedded API server with k8or's CRDs installed: their schemas and CEL rules judge what is created. */
export async function startCrdSandbox(userAgent = 'examples-test'): Promise<CrdSandbox> {
  const sandbox = await startSandbox();
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sandbox.kubeconfig);
  const user = new KubeRest(kubeConfig, { userAgent });
  try {
    for (const crd of allCrds()) await user.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  } catch (error) {
    user.close();
    await sandbox.stop();
    throw error;
  }
  return {
    user,
    stop: async () => {
      user.close();
      await sandbox.stop();
    },
  };
}

/** `startCrdSandbox()` for the enclosing `describe`: started before its tests, stopped after them. */
export function crdSandboxForSuite(userAgent?: string): { readonly user: KubeRest } {
  let started: CrdSandbox | undefined;
  before(async () => {
    started = await startCrdSandbox(userAgent);
  });
  after(async () => {
    await started?.stop();
  });
  return {
    get user(): KubeRest {
      if (!started) throw new Error('the CRD sandbox is not started yet (use it inside the tests)');
      return started.user;
    },
  };
}

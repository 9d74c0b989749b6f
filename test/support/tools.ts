// helm and kubectl set up for one test run: a private HOME, Helm's cache/config/data dirs, one kubeconfig.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { helmBinary, kubectlBinary } from '@k8or/test-binaries';
import type { Tool } from './run.ts';

export const CHART_DIR = fileURLToPath(new URL('../../charts/k8or/', import.meta.url));
export const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));

export interface Tools {
  helm: Tool;
  kubectl: Tool;
}

export async function tools(home: string, kubeconfigPath: string): Promise<Tools> {
  const env = {
    HOME: home,
    KUBECONFIG: kubeconfigPath,
    HELM_CACHE_HOME: join(home, 'helm-cache'),
    HELM_CONFIG_HOME: join(home, 'helm-config'),
    HELM_DATA_HOME: join(home, 'helm-data'),
  };
  // K8OR_E2E_KUBECTL: a kubectl within one minor version of another cluster's API server (kubectl's skew policy)
  const kubectl = process.env['K8OR_E2E_KUBECTL'] || (await kubectlBinary());
  return { helm: { binary: await helmBinary(), env }, kubectl: { binary: kubectl, env } };
}

/** Every provider the chart can enable. */
export const PROVIDERS = ['aws', 'gcp', 'azure'] as const;

// The embedded API server as a cluster of its own, for running the suite with K8OR_E2E_KUBECONFIG
// without a real cluster: a separate process whose kubeconfig is a file, which the suite treats as any
// external cluster (it starts nothing of it and reads nothing of it but its API).
//
//   node test/support/standalone-sandbox.ts --kubeconfig FILE [--provider-configs FILE] [--route NAMESPACE/SERVICE=URL ...]
//
// A route stands in for kube-proxy: the API server sends the calls of a webhook Service to URL (the
// suite's K8OR_E2E_WEBHOOK_SERVICE_PORT). With --provider-configs it also starts the local clouds and
// writes the ProviderConfigs and Secret that point at them (for K8OR_E2E_PROVIDER_CONFIGS). It prints
// "ready" once it serves, and stops on SIGTERM or SIGINT.
import { parseArgs } from 'node:util';
import { startSandbox } from '@k8or/apiserver';
import { startBackends, type Backends } from './backends.ts';
import { sandboxProviderSettings, writeProviderSettings } from './provider-settings.ts';
import { RELEASE_NAMESPACE } from './target.ts';

const { values } = parseArgs({ options: { kubeconfig: { type: 'string' }, 'provider-configs': { type: 'string' }, route: { type: 'string', multiple: true } } });
if (!values.kubeconfig) throw new Error('--kubeconfig FILE is required: where the cluster\'s admin kubeconfig is written');
const routes = new Map<string, string>();
for (const route of values.route ?? []) {
  const match = /^([a-z0-9-]+)\/([a-z0-9-]+)=(https:\/\/.+)$/.exec(route);
  if (!match) throw new Error(`--route must be NAMESPACE/SERVICE=https://HOST:PORT, got "${route}"`);
  routes.set(`${match[1]}/${match[2]}`, match[3]!);
}

const sandbox = await startSandbox({
  kubeconfigPath: values.kubeconfig,
  serviceResolver: (namespace, name) => routes.get(`${namespace}/${name}`) ?? `https://${name}.${namespace}.svc`,
});
let backends: Backends | undefined;
if (values['provider-configs']) {
  backends = await startBackends();
  await writeProviderSettings(values['provider-configs'], sandboxProviderSettings(RELEASE_NAMESPACE, backends));
}
console.log(`ready ${sandbox.url}`);
const stop = (): void => {
  void sandbox
    .stop()
    .then(() => backends?.stop())
    .then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

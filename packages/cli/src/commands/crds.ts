import { allCrds, crdYaml } from '@k8or/api';

/** `k8or crds`: prints the CRDs, ready for `kubectl apply -f -`. */
export function crdsCommand(): number {
  process.stdout.write(allCrds().map(crdYaml).join(''));
  return 0;
}

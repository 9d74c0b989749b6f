import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The machine's kubectl, else the newest of the Google Cloud SDK's. */
export const KUBECTL = existsSync('/usr/bin/kubectl') ? '/usr/bin/kubectl' : '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Kubectl {
  /** Runs the real kubectl; never throws, the exit code is part of the answer. */
  run(args: string[], stdin?: string): Promise<Run>;
  /** Writes `yaml` to `<dir>/<name>.yaml` and runs `kubectl apply -f` on it. */
  apply(name: string, yaml: string, extra?: string[]): Promise<Run>;
}

/** kubectl against the cluster of `kubeconfigPath`, with manifests written to `dir`. */
export function kubectlFor(kubeconfigPath: string, dir: string): Kubectl {
  const run = (args: string[], stdin?: string): Promise<Run> =>
    new Promise((resolve) => {
      const child = execFile(KUBECTL, args, { env: { ...process.env, KUBECONFIG: kubeconfigPath }, timeout: 60_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
      if (stdin !== undefined) child.stdin?.end(stdin);
    });
  return {
    run,
    apply: async (name, yaml, extra = []) => {
      const file = join(dir, `${name}.yaml`);
      await writeFile(file, yaml);
      return run(['apply', '-f', file, ...extra]);
    },
  };
}

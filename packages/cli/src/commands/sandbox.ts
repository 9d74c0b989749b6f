import { parseArgs } from 'node:util';
import { dirname, join, resolve } from 'node:path';
import { DEFAULT_RESYNC_FLOOR_MS, parseGoDuration } from '@k8or/core/policy';
import { localStackLogger, startLocalStack, type ProgressEvent } from '../local-stack.js';

const HELP = `k8or sandbox: run k8or locally, ready for kubectl

Starts an embedded Kubernetes API server with the k8or CRDs, the admission
webhook, the operator with the AWS, GCP and Azure providers, and local backends:
an S3 fake and DynamoDB Local behind the "default" ProviderConfig, a GCS fake and
Google's Bigtable emulator (when the Google Cloud SDK has it) behind "local-gcp",
Azurite (Blob and Table) behind "local-azure".

Options:
  --kubeconfig FILE   where to write the kubeconfig (default .k8or/kubeconfig)
  --port N            API server port (default 6443; 0 picks a free port)
  --data-dir DIR      keep objects and the local clouds' data across restarts,
                      and the local backends on the same ports (DIR/ports.json)
                      (default: memory, new ports each start)
  --log-file FILE     JSON logs of every part (default .k8or/sandbox.log)
  --log-level LEVEL   debug, info, warn (default info)
  --resync-period D   how often each resource is checked for drift, a Go
                      duration (default 30s, so a change made in a local
                      cloud shows at once; the operator's default is 1h)
`;

/** The sandbox checks for drift often: its clouds are local, and a new user should see drift at once. */
export const SANDBOX_RESYNC_PERIOD = '30s';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

function parseSandboxArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      kubeconfig: { type: 'string', default: '.k8or/kubeconfig' },
      port: { type: 'string', default: '6443' },
      'data-dir': { type: 'string' },
      'log-file': { type: 'string', default: '.k8or/sandbox.log' },
      'log-level': { type: 'string', default: 'info' },
      'resync-period': { type: 'string', default: SANDBOX_RESYNC_PERIOD },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

/** `k8or sandbox`: runs until SIGINT/SIGTERM, then stops every part cleanly. */
export async function sandboxCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseSandboxArgs(argv);
  } catch (error) {
    process.stderr.write(`k8or sandbox: ${error instanceof Error ? error.message : String(error)}\n${HELP}`);
    return 2;
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535) {
    process.stderr.write(`k8or sandbox: --port must be a whole number from 0 to 65535, got "${values.port}"\n`);
    return 2;
  }
  if (!LOG_LEVELS.includes(values['log-level'])) {
    process.stderr.write(`k8or sandbox: --log-level must be one of ${LOG_LEVELS.join(', ')}, got "${values['log-level']}"\n`);
    return 2;
  }
  const resyncPeriodMs = parseGoDuration(values['resync-period']);
  if (resyncPeriodMs === undefined || resyncPeriodMs < DEFAULT_RESYNC_FLOOR_MS) {
    process.stderr.write(`k8or sandbox: --resync-period must be a Go duration of at least 10s, such as 30s or 5m, got "${values['resync-period']}"\n`);
    return 2;
  }
  const kubeconfigPath = resolve(values.kubeconfig);
  const logFile = resolve(values['log-file']);
  const logger = localStackLogger(logFile, values['log-level']);
  process.stdout.write('starting the k8or sandbox...\n');
  const started = Date.now();
  const stack = await startLocalStack(
    { kubeconfigPath, port, logFile, logLevel: values['log-level'], resyncPeriodMs, onProgress: progressPrinter(), ...(values['data-dir'] ? { dataDir: resolve(values['data-dir']) } : {}) },
    logger,
  );
  process.stdout.write(`all started in ${seconds(Date.now() - started)}\n`);
  const e = stack.endpoints;
  process.stdout.write(
    [
      '',
      'k8or sandbox is ready.',
      `  API server   ${e.apiServer}`,
      `  webhook      ${e.webhook}`,
      `  probes       ${e.probes}/readyz  ${e.probes}/metrics`,
      `  S3 fake      ${e.s3}`,
      `  DynamoDB     ${e.dynamodb ?? 'not running (needs Java 17)'}`,
      `  GCS fake     ${e.gcp.gcs}  ${e.gcp.gcsHttps} (CA ${e.gcp.caFile})`,
      `  GCP key      ${e.gcp.serviceAccount.keyFile} (${e.gcp.serviceAccount.email}; ProviderConfig local-gcp)`,
      `  Bigtable     ${e.gcp.bigtable ?? '-'} (${e.gcp.bigtableNote})`,
      `  Azurite      blob ${e.azurite.blob}  table ${e.azurite.table}  (account ${e.azurite.accountName}; ProviderConfig local-azure)`,
      `  for scripts  ${join(dirname(kubeconfigPath), 'sandbox.json')} (endpoints and local credentials)`,
      `  logs         ${logFile}`,
      `  drift check  every ${values['resync-period']} (--resync-period); k8or reconcile KIND/NAME checks one at once`,
      '',
      'Try it:',
      `  export KUBECONFIG=${kubeconfigPath}`,
      '  kubectl apply -f examples/sandbox/            # AWS, through the default ProviderConfig',
      '  kubectl apply -f examples/sandbox/gcp/        # GCP, through the local-gcp ProviderConfig',
      '  kubectl apply -f examples/sandbox/azure/      # Azure, through the local-azure ProviderConfig',
      '  kubectl get buckets,tables                   # the DRIFT column counts settings changed in the cloud',
      '  npx k8or plan -f examples/sandbox/           # what k8or would do, writing nothing',
      '  npx k8or import --provider-config local-gcp  # manifests for what a cloud already holds',
      '',
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );

  await new Promise<void>((resolveSignal) => {
    process.once('SIGINT', () => resolveSignal());
    process.once('SIGTERM', () => resolveSignal());
  });
  process.stdout.write('stopping...\n');
  await stack.stop();
  process.stdout.write('stopped.\n');
  return 0;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Prints each part as it starts and is ready, with how long it took; a part that failed with its fix. */
function progressPrinter(): (event: ProgressEvent) => void {
  const startedAt = new Map<string, number>();
  return (event) => {
    if ('fix' in event) {
      process.stdout.write(`  FAILED   ${event.part}: ${event.fix}\n`);
    } else if ('message' in event) {
      process.stdout.write(`  NOTICE   ${event.part}: ${event.message}\n`);
    } else if (event.state === 'starting') {
      startedAt.set(event.part, Date.now());
      process.stdout.write(`  starting ${event.part}...\n`);
    } else if (event.state === 'ready') {
      process.stdout.write(`  ready    ${event.part} (${seconds(Date.now() - (startedAt.get(event.part) ?? Date.now()))})\n`);
    }
  };
}

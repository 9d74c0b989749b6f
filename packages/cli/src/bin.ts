#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { MANAGED_KINDS, type ManagedKindName } from '@k8or/api';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { crdsCommand } from './commands/crds.js';
import { addSettingOptions, operatorSettings, runComponents, webhookSettings } from './commands/operator.js';
import { TraceArgumentError } from './trace/target-arg.js';
import { ManifestPathError } from './manifests/read.js';

// The other commands' modules load when their command runs: `k8or operator`, the image's command
// in every Pod, then never loads the sandbox's local clouds or the cluster-reading commands' clients
// (about 70 MiB of heap a replica would hold for nothing).
const sandbox = () => import('./commands/sandbox.js');
const importing = () => import('./commands/import.js');
const plan = () => import('./commands/plan.js');
const validate = () => import('./commands/validate.js');
const clusterReads = () => import('./cluster/reads.js');
const trace = () => import('./commands/trace.js');
const approve = () => import('./commands/approve.js');
const reconcile = () => import('./commands/reconcile.js');

/** How long plan and import wait for one cloud call. */
const CLOUD_TIMEOUT_MS = 60_000;
/** The operator's default drift-check period (its --resync-period). */
const DEFAULT_RESYNC_MS = 3_600_000;

function kindList(value: string): ManagedKindName[] {
  const kinds = list(value);
  const unknown = kinds.filter((k) => !(MANAGED_KINDS as readonly string[]).includes(k));
  if (unknown.length || kinds.length === 0) throw new InvalidArgumentError(`must be a comma-separated list of ${MANAGED_KINDS.join(', ')}`);
  return kinds as ManagedKindName[];
}

/** Exit codes every command keeps to. */
export const ExitCode = { ok: 0, failed: 1, usage: 2 } as const;

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
const list = (value: string): string[] =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

function providerOptions(command: Command): Command {
  return command
    .option('--providers <LIST>', 'providers to load, comma-separated (aws, or a package name such as k8or-provider-foo); default every installed one', list)
    .option('--provider-root <DIR>', 'also look for provider packages in DIR/node_modules');
}

/** The `k8or` program: every command, its flags and their help. Resolves the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let exitCode: number = ExitCode.ok;
  const program = new Command('k8or')
    .description('k8or: portable Bucket and Table resources for AWS, GCP and Azure, the Kubernetes way.')
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'k8or: ')) });

  program
    .command('sandbox')
    .description('run k8or locally: an embedded API server, the local cloud backends, the webhook and the operator (k8or sandbox --help for its options)')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[options...]')
    .action(async (rest: string[]) => {
      exitCode = await (await sandbox()).sandboxCommand(rest);
    });

  addSettingOptions(
    program
      .command('operator')
      .description('run the controllers (and with --webhook the admission webhook too) in a cluster, or against a kubeconfig')
      .option('--webhook', 'also serve the admission webhook in this process'),
    operatorSettings(),
  ).action(async (flags: Record<string, string | boolean | undefined>) => {
    const { webhook, ...settings } = flags;
    exitCode = await runComponents('operator', settings, webhook ? ['controllers', 'webhook'] : ['controllers']);
  });

  addSettingOptions(program.command('webhook').description('serve only the admission webhook (validation and defaulting), in a cluster or against a kubeconfig'), webhookSettings()).action(
    async (flags: Record<string, string | boolean | undefined>) => {
      exitCode = await runComponents('webhook', flags, ['webhook']);
    },
  );

  providerOptions(
    program
      .command('validate')
      .description('check manifests offline as the API server would admit them: the CRD schema (strict fields), then exactly the admission webhook\'s rules and defaults, against the files\' ProviderConfigs and those of --provider, --provider-configs or --context (else each installed provider\'s rules); exit 0 valid, 1 violations, 2 usage')
      .requiredOption('-f, --filename <FILE|DIR|->', 'a manifest file, a directory of them, or - for stdin; repeat for more', collect)
      .option('-R, --recursive', 'read directories given with -f recursively', false)
      .addOption(new Option('-o, --output <FORMAT>', 'human or json').choices(['human', 'json']).default('human'))
      .addOption(new Option('--default-deletion-policy <POLICY>', 'the operator\'s default deletion policy').choices(['Delete', 'Retain']).default('Delete'))
      .option('--secrets-namespace <NS>', 'the namespace whose Secrets the operator reads', 'k8or-system')
      .option('--cluster-id <ID>', 'the operator\'s cluster id, which default external names fold in (default: K8OR_CLUSTER_ID; without one, spec.name is left for the operator to fill)')
      .addOption(new Option('--provider <NAME>', 'a ProviderConfig the files do not hold is taken to be of this provider (aws, gcp, azure, or a third party\'s); without --provider, --provider-configs or --context, it is checked as each installed provider and the report says which admit the objects').conflicts(['providerConfigs', 'context', 'kubeconfig']))
      .addOption(new Option('--provider-configs <FILE>', 'the cluster\'s ProviderConfigs (and Namespaces) from FILE; a ProviderConfig in neither FILE nor the files is refused, as the cluster would').conflicts(['context', 'kubeconfig']))
      .option('--context <NAME>', 'read the ProviderConfigs and Namespaces (read-only: list, nothing else) from this context of the kubeconfig')
      .option('--kubeconfig <FILE>', 'with --context, or alone for its current context: the kubeconfig to read them from (default: KUBECONFIG, ~/.kube/config)'),
  ).action(async (options: { filename: string[]; recursive: boolean; output: 'human' | 'json'; providers?: string[]; providerRoot?: string; defaultDeletionPolicy: 'Delete' | 'Retain'; secretsNamespace: string; clusterId?: string; provider?: string; providerConfigs?: string; context?: string; kubeconfig?: string }) => {
    const clusterId = options.clusterId ?? process.env.K8OR_CLUSTER_ID;
    exitCode = await (await validate()).validateCommand({ ...options, providers: options.providers ?? [], providerRoot: options.providerRoot, clusterId });
  });

  providerOptions(
    program
      .command('plan')
      .description('show what the operator would do in the cloud for each Bucket and Table of the manifests (create, update with each field, no change, blocked), without writing anything to the cloud or the cluster; its cloud calls keep to each ProviderConfig\'s rate limits (spec.rateLimits, else the provider defaults), as the operator\'s do')
      .requiredOption('-f, --filename <FILE|DIR|->', 'manifests to plan; repeat for more', collect)
      .option('--provider-config <FILE>', 'use the ProviderConfig in FILE instead of the cluster\'s (credentials Secrets are read from the files given with -f, then the cluster)')
      .option('--kubeconfig <FILE>', 'the cluster to read ProviderConfigs, Secrets and stored objects from (default: KUBECONFIG, in-cluster, ~/.kube/config)')
      .option('--cluster-id <ID>', 'the operator\'s cluster id, for owner tags and default names (default: K8OR_CLUSTER_ID, else the uid of kube-system, as the operator and the sandbox use it)')
      .addOption(new Option('-o, --output <FORMAT>', 'human or json').choices(['human', 'json']).default('human')),
  ).action(async (options: { filename: string[]; providerConfig?: string; kubeconfig?: string; clusterId?: string; output: 'human' | 'json'; providers?: string[]; providerRoot?: string }) => {
    exitCode = await (await plan()).planCommand({
      filename: options.filename,
      providerConfig: options.providerConfig,
      kubeconfig: options.kubeconfig,
      clusterId: options.clusterId,
      output: options.output,
      providers: options.providers ?? [],
      providerRoot: options.providerRoot,
      timeoutMs: CLOUD_TIMEOUT_MS,
    });
  });

  providerOptions(
    program
      .command('import')
      .description('list the buckets and tables in the cloud account of a ProviderConfig and print Bucket and Table manifests for them (ObserveOnly, k8or.io/adopt), ready for kubectl apply; its cloud calls keep to the ProviderConfig\'s rate limits (spec.rateLimits, else the provider defaults), as the operator\'s do')
      .requiredOption('--provider-config <NAME>', 'the ProviderConfig (in the cluster) whose account to list')
      .option('--kubeconfig <FILE>', 'the cluster to read the ProviderConfig and its credentials from (default: KUBECONFIG, in-cluster, ~/.kube/config)')
      .option('-n, --namespace <NS>', 'namespace of the manifests', 'default')
      .addOption(new Option('--kinds <LIST>', 'kinds to list, comma-separated').default(['Bucket', 'Table'], 'Bucket,Table').argParser(kindList))
      .option('--include-managed', 'also list resources another k8or object already manages', false),
  ).action(async (options: { providerConfig: string; kubeconfig?: string; namespace: string; kinds: ManagedKindName[]; includeManaged: boolean; providers?: string[]; providerRoot?: string }) => {
    exitCode = await (await importing()).importCommand({ ...options, kubeconfig: options.kubeconfig, providerRoot: options.providerRoot, providers: options.providers ?? [], timeoutMs: CLOUD_TIMEOUT_MS });
  });

  providerOptions(
    program
      .command('trace')
      .description('show one Bucket, Table or ProviderConfig as a tree: its conditions, ProviderConfig and cloud target, credential source (never its content), the cloud resource read live (read-only, within the ProviderConfig\'s rate limits) and whose it is, drift and resync schedule, last Events, outputs ConfigMap, and each problem found with the one thing to do about it')
      .argument('<KIND/NAME...>', 'bucket/NAME, table/NAME or providerconfig/NAME (or KIND NAME); kubectl\'s spellings work (buckets, bkt, bucket.k8or.io)')
      .option('-n, --namespace <NS>', 'the object\'s namespace (default: the context\'s, else default)')
      .option('--kubeconfig <FILE>', 'the cluster to read (default: KUBECONFIG, in-cluster, ~/.kube/config)')
      .option('--context <NAME>', 'the kubeconfig context to use (default: its current context)')
      .option('--cluster-id <ID>', 'the operator\'s cluster id, for owner tags and default names (default: K8OR_CLUSTER_ID, else the uid of kube-system)')
      .addOption(new Option('-o, --output <FORMAT>', 'human or json').choices(['human', 'json']).default('human')),
  ).action(async (target: string[], options: { namespace?: string; kubeconfig?: string; context?: string; clusterId?: string; output: 'human' | 'json'; providers?: string[]; providerRoot?: string }) => {
    exitCode = await (await trace()).traceCommand({
      target,
      namespace: options.namespace,
      kubeconfig: options.kubeconfig,
      context: options.context,
      clusterId: options.clusterId,
      output: options.output,
      providers: options.providers ?? [],
      providerRoot: options.providerRoot,
      timeoutMs: CLOUD_TIMEOUT_MS,
      defaultResyncMs: DEFAULT_RESYNC_MS,
    });
  });

  program
    .command('approve')
    .description('approve the drift a Bucket or Table holds under spec.driftPolicy Hold: prints the held difference and writes its digest into k8or.io/approve-drift; the operator then repairs exactly that difference')
    .argument('<KIND/NAME>', 'the object, such as bucket/photos or table/orders')
    .option('-n, --namespace <NS>', 'namespace of the object (default: the kubeconfig context\'s, else default)')
    .option('--kubeconfig <FILE>', 'the cluster (default: KUBECONFIG, in-cluster, ~/.kube/config)')
    .action(async (target: string, options: { namespace?: string; kubeconfig?: string }) => {
      exitCode = await (await approve()).approveCommand({ target, namespace: options.namespace, kubeconfig: options.kubeconfig });
    });

  program
    .command('reconcile')
    .description('reconcile a Bucket or Table now, drift check included, by setting k8or.io/reconcile-requested-at; the operator echoes the value in status.lastHandledReconcileAt')
    .argument('<KIND/NAME>', 'the object, such as bucket/photos or table/orders')
    .option('-n, --namespace <NS>', 'namespace of the object (default: the kubeconfig context\'s, else default)')
    .option('--kubeconfig <FILE>', 'the cluster (default: KUBECONFIG, in-cluster, ~/.kube/config)')
    .option('--wait <SECONDS>', 'wait up to SECONDS for the operator to handle it, then print Synced', (v) => {
      const seconds = Number(v);
      if (!Number.isFinite(seconds) || seconds < 0) throw new InvalidArgumentError('must be a number of seconds');
      return seconds;
    })
    .action(async (target: string, options: { namespace?: string; kubeconfig?: string; wait?: number }) => {
      exitCode = await (await reconcile()).reconcileCommand({ target, namespace: options.namespace, kubeconfig: options.kubeconfig, waitMs: (options.wait ?? 0) * 1000 });
    });

  program
    .command('crds')
    .description('print the k8or CRDs as YAML, ready for kubectl apply -f -')
    .action(() => {
      exitCode = crdsCommand();
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? ExitCode.ok : ExitCode.usage;
    }
    // Loaded already when their command threw them; loaded here only on a failure of another command.
    const [{ PlanUsageError }, { ValidateUsageError, ClusterReadError }, { ClusterContextError }, { TraceNotFoundError }, { ImportError }] = await Promise.all([plan(), validate(), clusterReads(), trace(), importing()]);
    if (error instanceof ManifestPathError || error instanceof PlanUsageError || error instanceof ValidateUsageError || error instanceof ClusterContextError || error instanceof TraceArgumentError) {
      process.stderr.write(`k8or: ${error.message}\n`);
      return ExitCode.usage;
    }
    if (error instanceof TraceNotFoundError) {
      process.stderr.write(`k8or trace: ${error.message}\n`);
      return ExitCode.failed;
    }
    if (error instanceof ClusterReadError) {
      process.stderr.write(`k8or validate: ${error.message}\n`);
      return ExitCode.failed;
    }
    if (error instanceof ImportError) {
      process.stderr.write(`k8or import: ${error.message}\n`);
      return ExitCode.failed;
    }
    throw error;
  }
  return exitCode;
}

/**
 * Exits with `code` once everything written to stdout and stderr has reached them. Writes to a pipe
 * are asynchronous, and `process.exit` drops what is still queued: a large `-o json` report read
 * through a pipe came out cut short. A write's callback runs after every earlier write is flushed.
 */
export function exitWhenFlushed(code: number): void {
  let pending = 2;
  const done = (): void => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

// Run directly (`node dist/bin.js`, as older scripts do), not only through bin/k8or.js.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => exitWhenFlushed(code),
    (error: unknown) => {
      process.stderr.write(`k8or: ${error instanceof Error ? error.message : String(error)}\n`);
      exitWhenFlushed(1);
    },
  );
}

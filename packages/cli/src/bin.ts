import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { crdsCommand } from './commands/crds.js';
import { addSettingOptions, operatorSettings, runComponents, webhookSettings } from './commands/operator.js';
import { sandboxCommand } from './commands/sandbox.js';
import { validateCommand } from './commands/validate.js';
import { ManifestPathError } from './manifests/read.js';

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
      exitCode = await sandboxCommand(rest);
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
      .description('check manifests offline with exactly the admission webhook\'s rules and defaults; exit 0 valid, 1 violations, 2 usage')
      .requiredOption('-f, --filename <FILE|DIR|->', 'a manifest file, a directory of them, or - for stdin; repeat for more', collect)
      .option('-R, --recursive', 'read directories given with -f recursively', false)
      .addOption(new Option('-o, --output <FORMAT>', 'human or json').choices(['human', 'json']).default('human'))
      .addOption(new Option('--default-deletion-policy <POLICY>', 'the operator\'s default deletion policy').choices(['Delete', 'Retain']).default('Delete'))
      .option('--secrets-namespace <NS>', 'the namespace whose Secrets the operator reads', 'k8or-system'),
  ).action(async (options: { filename: string[]; recursive: boolean; output: 'human' | 'json'; providers?: string[]; providerRoot?: string; defaultDeletionPolicy: 'Delete' | 'Retain'; secretsNamespace: string }) => {
    exitCode = await validateCommand({ ...options, providers: options.providers ?? [], providerRoot: options.providerRoot });
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
    if (error instanceof ManifestPathError) {
      process.stderr.write(`k8or: ${error.message}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  return exitCode;
}

// Run directly (`node dist/bin.js`, as older scripts do), not only through bin/k8or.js.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`k8or: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}

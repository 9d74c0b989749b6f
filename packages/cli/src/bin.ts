#!/usr/bin/env node
import { crdsCommand } from './commands/crds.js';
import { sandboxCommand } from './commands/sandbox.js';

const USAGE = `usage: k8or <command> [options]

commands:
  sandbox   run the local sandbox (API server, operator, webhook, backends)
  crds      print the k8or CRDs as YAML
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'sandbox':
      return sandboxCommand(rest);
    case 'crds':
      return crdsCommand();
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`k8or: unknown command "${command}"\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`k8or: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);

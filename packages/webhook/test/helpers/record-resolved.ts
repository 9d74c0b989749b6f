// Preloaded with --import (and so in every worker thread too, which inherits execArgv): appends
// `threadId url` for every module each thread resolves to the file $K8OR_RESOLVED_LOG.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { threadId } from 'node:worker_threads';

const log = process.env['K8OR_RESOLVED_LOG'];
if (log) {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const result = nextResolve(specifier, context);
      appendFileSync(log, `${threadId} ${result.url}\n`);
      return result;
    },
  });
}

import { createSecureContext } from 'node:tls';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';

export interface CertificateFilesOptions {
  certFile: string;
  keyFile: string;
  /** CA of the serving certificate (cert-manager's `ca.crt`), reported as the caBundle; defaults to the certificate itself. */
  caFile?: string;
}

export interface CertificatePair {
  cert: string;
  key: string;
  caPem: string;
}

/** Reads the pair and checks that the key matches the certificate (throws otherwise). */
export function readCertificateFiles(options: CertificateFilesOptions): CertificatePair {
  const cert = readFileSync(options.certFile, 'utf8');
  const key = readFileSync(options.keyFile, 'utf8');
  createSecureContext({ cert, key });
  const caPem = options.caFile ? readFileSync(options.caFile, 'utf8') : cert;
  return { cert, key, caPem };
}

/**
 * Watches the directories of the certificate and key (cert-manager and
 * kubelet swap a `..data` symlink, so the files themselves are replaced, not
 * written) and calls `onChange` with the new pair once it reads back whole and
 * matching. A half-written rotation (key and certificate out of step) is
 * retried shortly rather than loaded.
 */
export function watchCertificateFiles(options: CertificateFilesOptions, logger: Logger, onChange: (pair: CertificatePair) => void): { close(): void } {
  let timer: NodeJS.Timeout | undefined;
  let last = '';
  let attempts = 0;
  const reload = (): void => {
    try {
      const pair = readCertificateFiles(options);
      attempts = 0;
      if (pair.cert + pair.key + pair.caPem === last) return;
      last = pair.cert + pair.key + pair.caPem;
      onChange(pair);
    } catch (error) {
      if (++attempts <= 20) schedule(500);
      logger.warn({ err: error, certFile: options.certFile }, 'certificate files not loadable yet; keeping the current certificate');
    }
  };
  const schedule = (delayMs = 100): void => {
    clearTimeout(timer);
    timer = setTimeout(reload, delayMs);
  };
  try {
    last = (() => {
      const pair = readCertificateFiles(options);
      return pair.cert + pair.key + pair.caPem;
    })();
  } catch {
    last = '';
  }
  const directories = [...new Set([dirname(options.certFile), dirname(options.keyFile), ...(options.caFile ? [dirname(options.caFile)] : [])])];
  const watchers: FSWatcher[] = directories.map((directory) => watch(directory, () => schedule()));
  watchers.forEach((w) => w.on('error', (error) => logger.warn({ err: error }, 'certificate directory watch failed')));
  return {
    close(): void {
      clearTimeout(timer);
      watchers.forEach((w) => w.close());
    },
  };
}

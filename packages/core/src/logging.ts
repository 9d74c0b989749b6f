import { pino, stdSerializers, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/**
 * Keys whose values are credentials or secret material. A value under one of
 * these keys is replaced by `[Redacted]` at any depth of a log record.
 * `data` and `stringData` cover Kubernetes Secrets (and, as a cost, ConfigMaps).
 */
export const SENSITIVE_KEYS: readonly string[] = [
  'data',
  'stringData',
  'secretAccessKey',
  'accessKeyId',
  'sessionToken',
  'token',
  'accessToken',
  'refreshToken',
  'password',
  'accountKey',
  'connectionString',
  'sasToken',
  'clientSecret',
  'privateKey',
  'private_key',
  'apiKey',
  'authorization',
  'Authorization',
  'cookie',
];

/** pino `redact` paths for {@link SENSITIVE_KEYS}, at the top level and one and two levels down. */
export const REDACT_PATHS: readonly string[] = SENSITIVE_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);

const CENSOR = '[Redacted]';
const SENSITIVE = new Set(SENSITIVE_KEYS);
const MAX_DEPTH = 10;

export interface CreateLoggerOptions {
  /** pino level; default `LOG_LEVEL` or `info`. */
  level?: string;
  /** Added to every record as `name`. */
  name?: string;
  /** Where JSON lines go; default stdout. */
  destination?: DestinationStream;
  /** More keys to redact, besides {@link SENSITIVE_KEYS}. */
  redactKeys?: string[];
}

/**
 * A pino JSON logger that never writes credentials: values under sensitive keys
 * (Secret data, tokens, keys, passwords, connection strings, Authorization
 * headers) are replaced by `[Redacted]` at any depth, by pino's `redact` paths
 * for the common shapes and by a deep scrub for the rest. Errors go under `err`.
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const sensitive = new Set([...SENSITIVE, ...(options.redactKeys ?? [])]);
  const paths = [...REDACT_PATHS, ...(options.redactKeys ?? []).flatMap((key) => [key, `*.${key}`, `*.*.${key}`])];
  const loggerOptions: LoggerOptions = {
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    name: options.name,
    redact: { paths, censor: CENSOR },
    serializers: { err: (error: unknown) => scrub(stdSerializers.err(error as Error), sensitive) },
    formatters: {
      // Deeper or odder shapes than the redact paths reach (a credentials object nested in a request).
      log: (record) => scrub(record, sensitive) as Record<string, unknown>,
      // Child logger bindings too (`logger.child({ credentials })`).
      bindings: (bindings) => scrub(bindings, sensitive) as Record<string, unknown>,
    },
  };
  // Without a destination pino writes to stdout synchronously, so nothing is lost when the process dies.
  return options.destination ? pino(loggerOptions, options.destination) : pino(loggerOptions);
}

/** A child logger whose records all carry the resource they concern, as `resource: "namespace/name"`. */
export function resourceLogger(logger: Logger, resource: string, bindings: Record<string, unknown> = {}): Logger {
  return logger.child({ ...bindings, resource });
}

/**
 * A copy of `value` with sensitive keys censored; leaves the caller's objects
 * untouched. Shared and cyclic references map to the same scrubbed copy, and
 * anything nested deeper than MAX_DEPTH is dropped rather than risk a leak.
 */
function scrub(value: unknown, sensitive: Set<string>, depth = 0, copies = new WeakMap<object, unknown>()): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Buffer.isBuffer(value) || value instanceof Date || ArrayBuffer.isView(value)) return value;
  const known = copies.get(value);
  if (known !== undefined) return known;
  if (depth > MAX_DEPTH) return '[Truncated]';
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    copies.set(value, copy);
    for (const item of value) copy.push(scrub(item, sensitive, depth + 1, copies));
    return copy;
  }
  // Values that serialise themselves (URL and the like) are left to do so.
  if (!(value instanceof Error) && typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  // Errors stay Errors (for pino's err serializer); plain objects and class instances
  // alike (client-node deserialises into model classes such as V1Secret) are copied.
  const copy = (value instanceof Error ? Object.create(Object.getPrototypeOf(value) as object) : {}) as Record<string, unknown>;
  copies.set(value, copy);
  const keys = value instanceof Error ? Object.getOwnPropertyNames(value) : Object.keys(value);
  for (const key of keys) {
    const field = (value as Record<string, unknown>)[key];
    copy[key] = sensitive.has(key) ? CENSOR : scrub(field, sensitive, depth + 1, copies);
  }
  return copy;
}

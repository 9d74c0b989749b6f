import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** One document of a manifest file. */
export interface ManifestDocument {
  /** The file (or `-` for stdin) and the document's position in it, from 1. */
  source: string;
  index: number;
  /** The parsed object; undefined when the document could not be parsed (see `error`). */
  object: unknown;
  error?: string;
}

/** A path given with -f that cannot be read: a usage error. */
export class ManifestPathError extends Error {}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/**
 * Reads every document of every path given with `-f`, as kubectl does: a
 * file, a directory (its .yaml, .yml and .json files, in name order; with
 * `recursive` its subdirectories too), or `-` for stdin. Multi-document YAML
 * gives one entry per document; empty documents are skipped; a List's items
 * count as documents. A document with a syntax error is kept with `error`, so
 * the rest are still checked.
 */
export function readManifests(paths: readonly string[], options: { recursive?: boolean; stdin?: () => string } = {}): ManifestDocument[] {
  const documents: ManifestDocument[] = [];
  for (const path of paths) {
    for (const file of filesOf(path, options.recursive ?? false)) {
      const text = file === '-' ? (options.stdin ?? readStdin)() : readFileSync(file, 'utf8');
      documents.push(...parseDocuments(file, text));
    }
  }
  return documents;
}

function filesOf(path: string, recursive: boolean): string[] {
  if (path === '-') return ['-'];
  let stats;
  try {
    stats = statSync(path);
  } catch {
    throw new ManifestPathError(`-f ${path}: no such file or directory`);
  }
  if (!stats.isDirectory()) return [path];
  const files: string[] = [];
  for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) {
      if (recursive) files.push(...filesOf(full, true));
    } else if (MANIFEST_EXTENSIONS.has(extname(entry.name))) {
      files.push(full);
    }
  }
  return files;
}

function parseDocuments(source: string, text: string): ManifestDocument[] {
  const documents: ManifestDocument[] = [];
  let index = 0;
  for (const document of parseAllDocuments(text)) {
    index += 1;
    if (document.errors.length > 0) {
      documents.push({ source, index, object: undefined, error: document.errors.map((e) => e.message).join('; ') });
      continue;
    }
    const object: unknown = document.toJS();
    if (object === null || object === undefined) continue;
    const items = (object as { kind?: unknown; items?: unknown }).kind === 'List' ? (object as { items?: unknown }).items : undefined;
    if (Array.isArray(items)) for (const item of items) documents.push({ source, index, object: item });
    else documents.push({ source, index, object });
  }
  return documents;
}

function readStdin(): string {
  return readFileSync(0, 'utf8');
}

import { createHash } from 'node:crypto';
import type { ManagedKindName } from '../group.js';
import type { CloudProvider } from '../types/provider-config.js';

/**
 * The external name k8or picks when the user gave none: deterministic (the same
 * object always gets the same name, so a retried create never makes a second
 * resource) and within the target cloud's rules. A short hash of namespace/name
 * keeps globally unique bucket names apart across namespaces that sanitise alike.
 */
export function defaultExternalName(kind: ManagedKindName, provider: CloudProvider, namespace: string, name: string): string {
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 8);
  if (kind === 'Bucket') {
    // Lowercase letters, digits and single hyphens satisfy S3, GCS and Azure containers at once.
    const base = `${namespace}-${name}`.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '');
    const stem = base.slice(0, 63 - hash.length - 1).replace(/-+$/, '');
    return stem ? `${stem}-${hash}` : `k8or-${hash}`;
  }
  if (provider === 'azure') {
    // Azure tables: letters and digits only, starting with a letter.
    const stem = `${namespace}${name}`.replace(/[^A-Za-z0-9]/g, '').replace(/^[0-9]+/, '');
    return `${(stem || 'k8or').slice(0, 63 - hash.length)}${hash}`;
  }
  if (provider === 'gcp') {
    const stem = `${namespace}-${name}`.replace(/[^-_.a-zA-Z0-9]/g, '-').replace(/^[-.]+/, '');
    return `${stem.slice(0, 50 - hash.length - 1)}-${hash}`;
  }
  // DynamoDB names are unique per account and region; namespace.name is readable and fits 255.
  return `${namespace}.${name}`.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 255);
}

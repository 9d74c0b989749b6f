/** The GCP provider's naming rules, per kind: what the webhook checks `spec.name` against, and the default external names. */
import { dnsLabelStem, shortHash, validateBigtableTableName, validateGcsBucketName, withHash } from '@k8or/api';
import { perObjectNameToken, type DefaultNameInput, type NamingRules } from '@k8or/core';

/** "google" and its look-alikes, which Cloud Storage refuses anywhere in a name. */
const GOOGLE_LIKE = /g[o0]{2}g[l1]e/g;

/**
 * Cloud Storage bucket names: one global namespace, so the default is `<namespace>-<name>-<hash>`
 * with the hash over cluster id, namespace and name (unique per installation), within 63
 * characters, without "goog" at the start or "google" look-alikes anywhere.
 */
export const gcsBucketNaming: NamingRules = {
  validate: (name, field) => validateGcsBucketName(name, field),
  defaultName: ({ clusterId, namespace, name }: DefaultNameInput) => {
    const stem = dnsLabelStem(`${namespace}-${name}`).replace(GOOGLE_LIKE, 'g-gle');
    const named = withHash(stem, shortHash(clusterId, namespace, name), { maxLength: 63 });
    return named.startsWith('goog') ? withHash(`k8or-${stem}`, shortHash(clusterId, namespace, name), { maxLength: 63 }) : named;
  },
};

/**
 * Bigtable table ids: unique per instance, `[_a-zA-Z0-9][-_.a-zA-Z0-9]*`, at most 50 characters,
 * `<namespace>-<name>-<hash><token>`. A table carries no labels, so its default name holds the
 * object's token (`perObjectNameToken`): a table whose identity never reached status (a crash, a
 * throttled observe after the create) is then provably this object's.
 */
export const bigtableTableNaming: NamingRules = {
  validate: (name, field) => validateBigtableTableName(name, field),
  defaultName: ({ clusterId, namespace, name, uid }: DefaultNameInput) =>
    withHash(dnsLabelStem(`${namespace}-${name}`), `${shortHash(clusterId, namespace, name)}${uid ? perObjectNameToken(uid) : ''}`, { maxLength: 50 }),
  perObjectName: true,
};

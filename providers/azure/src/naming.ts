/**
 * The Azure naming rules per kind: what the webhook checks `spec.name` with, and the default
 * external name. Both include a short hash of cluster id, namespace and name, so defaults are
 * unique per cluster and never collide by truncation.
 */
import { dnsLabelStem, shortHash, validateAzureContainerName, validateAzureTableName, withHash } from '@k8or/api';
import { perObjectNameToken, type DefaultNameInput, type NamingRules } from '@k8or/core';

/** Containers: lowercase letters, digits and single hyphens, 3 to 63, `<namespace>-<name>-<hash>`. */
export const containerNaming: NamingRules = {
  validate: (name, field) => validateAzureContainerName(name, field),
  defaultName: ({ clusterId, namespace, name }: DefaultNameInput) =>
    withHash(dnsLabelStem(`${namespace}-${name}`).replace(/-+/g, '-'), shortHash(clusterId, namespace, name), { maxLength: 63 }),
};

/**
 * Tables: letters and digits, starting with a letter, 3 to 63, `<namespace><name><hash><token>`.
 * A table carries no tags, so its default name holds the object's token (`perObjectNameToken`):
 * a CreateTable whose outcome is unknown is then provably this object's.
 */
export const tableNaming: NamingRules = {
  validate: (name, field) => validateAzureTableName(name, field),
  defaultName: ({ clusterId, namespace, name, uid }: DefaultNameInput) =>
    withHash(`${namespace}${name}`.replace(/[^A-Za-z0-9]/g, '').replace(/^[0-9]+/, ''), `${shortHash(clusterId, namespace, name)}${uid ? perObjectNameToken(uid) : ''}`, {
      maxLength: 63,
      separator: '',
      fallback: 'k8or',
    }),
  perObjectName: true,
};

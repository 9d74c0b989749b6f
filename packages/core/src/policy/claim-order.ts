import type { ManagedResource } from '@k8or/api';
import { creationStateOf } from './creation.js';

/**
 * Which of two objects naming one cloud resource manages it (negative: `a`). First the one that
 * holds the resource: its create succeeded (or it took the resource over), or it recorded the
 * resource's identity. Then the older, by creationTimestamp and then uid. Two objects admitted in
 * one second are ordered by uid, which says nothing of which reached the cloud first; the one whose
 * create made the resource keeps it, so the resource is never left to an object that cannot prove it.
 */
export function claimOrder(a: ManagedResource, b: ManagedResource): number {
  const held = Number(holdsTheResource(b)) - Number(holdsTheResource(a));
  return held !== 0 ? held : byAge(a, b);
}

function holdsTheResource(resource: ManagedResource): boolean {
  return creationStateOf(resource) === 'created' || Boolean(resource.status?.identity);
}

function byAge(a: ManagedResource, b: ManagedResource): number {
  const at = a.metadata.creationTimestamp ?? '';
  const bt = b.metadata.creationTimestamp ?? '';
  if (at !== bt) return Date.parse(at) - Date.parse(bt) || (at < bt ? -1 : 1);
  const au = a.metadata.uid ?? '';
  const bu = b.metadata.uid ?? '';
  return au < bu ? -1 : au > bu ? 1 : 0;
}

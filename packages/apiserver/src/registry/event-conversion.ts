/**
 * core/v1 Events and events.k8s.io/v1 Events are one stored object seen in two shapes, as on a real
 * server (k8s.io/kubernetes/pkg/apis/events/v1 conversion). Storage uses the core/v1 shape.
 */
import type { KubeObject } from '../types.js';
import type { StorageConversion } from './types.js';

/** events.k8s.io/v1 field -> core/v1 field */
const RENAMES: Array<[string, string]> = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['reportingController', 'reportingComponent'],
];

function rename(obj: KubeObject, pairs: Array<[string, string]>): KubeObject {
  const out: KubeObject = { ...obj };
  for (const [from, to] of pairs) {
    if (from in out) {
      out[to] = out[from];
      delete out[from];
    }
  }
  return out;
}

export const eventsV1Conversion: StorageConversion = {
  toStorage: (obj) => rename(obj, RENAMES),
  fromStorage: (obj) => rename(obj, RENAMES.map(([a, b]) => [b, a])),
};

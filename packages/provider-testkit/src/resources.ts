// What the providers' engine tests wait for and read: conditions, readiness, Events.
import type { Condition, ManagedResource } from '@k8or/api';
import { waitFor as pollUntil } from '@k8or/core/testing';

/** The namespace the users' resources live in. */
export const NAMESPACE = 'team-a';
/** The operator's namespace: the credentials Secrets. */
export const SECRETS_NAMESPACE = 'k8or-system';

export interface KubeEvent {
  involvedObject: { kind: string; name: string };
  type: string;
  reason: string;
  message: string;
}

/** Polls `check` until it returns a truthy value (every 50 ms, 60 s at most). */
export const waitFor = <T>(what: string, check: () => T | Promise<T>, timeoutMs = 60_000): Promise<NonNullable<T>> => pollUntil(what, check, timeoutMs, 50);

export const conditionOf = (resource: ManagedResource | undefined, type: string): Condition | undefined => resource?.status?.conditions?.find((c) => c.type === type);

/** Ready and Synced for the current generation. */
export const isReady = (resource: ManagedResource | undefined): boolean =>
  conditionOf(resource, 'Ready')?.status === 'True' && conditionOf(resource, 'Synced')?.status === 'True' && resource?.status?.observedGeneration === resource?.metadata.generation;

export const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

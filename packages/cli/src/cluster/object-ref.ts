import { KINDS, MANAGED_KINDS, type ManagedKindName } from '@k8or/api';

/** A managed object named on the command line: `bucket/photos`, `tables/orders`, `bkt/photos`. */
export interface ObjectRef {
  kind: ManagedKindName;
  name: string;
}

export class ObjectRefError extends Error {}

/** `KIND/NAME`, the kind as kubectl takes it (kind, singular, plural or short name, any case). */
export function parseObjectRef(text: string): ObjectRef {
  const [kindText, name, ...rest] = text.split('/');
  const kind = MANAGED_KINDS.find((k) => {
    const names = KINDS[k];
    return [names.kind, names.singular, names.plural, ...names.shortNames].some((n) => n.toLowerCase() === (kindText ?? '').toLowerCase());
  });
  if (!kind || !name || rest.length > 0) throw new ObjectRefError(`"${text}" is not KIND/NAME with KIND one of ${MANAGED_KINDS.map((k) => KINDS[k].singular).join(', ')} (for example bucket/photos)`);
  return { kind, name };
}

/** The object a command names, or undefined after telling the user why `text` names none (a usage error). */
export function objectRefOrUsage(text: string, err: { write(text: string): unknown }): ObjectRef | undefined {
  try {
    return parseObjectRef(text);
  } catch (error) {
    if (!(error instanceof ObjectRefError)) throw error;
    err.write(`k8or: ${error.message}\n`);
    return undefined;
  }
}

/**
 * Decoding of Kubernetes protobuf request bodies for the built-in kinds kubectl creates with typed
 * clients (`kubectl create namespace|configmap|secret` send protobuf since kubectl 1.3x). The body is
 * the "k8s\0" envelope around a runtime.Unknown whose `raw` is the object in its generated.proto form.
 * Only the fields those kinds carry are mapped; responses are always JSON.
 */
import { ApiError } from '../status.js';

type FieldKind = 'string' | 'bytes-base64' | 'int64' | 'bool' | 'time' | 'map-string' | 'map-bytes' | 'repeated-string' | 'message' | 'repeated-message' | 'int-or-string';
interface Field { name: string; kind: FieldKind; message?: MessageSpec }
type MessageSpec = Record<number, Field>;

const OWNER_REFERENCE: MessageSpec = {
  1: { name: 'kind', kind: 'string' },
  3: { name: 'name', kind: 'string' },
  4: { name: 'uid', kind: 'string' },
  5: { name: 'apiVersion', kind: 'string' },
  6: { name: 'controller', kind: 'bool' },
  7: { name: 'blockOwnerDeletion', kind: 'bool' },
};

const OBJECT_META: MessageSpec = {
  1: { name: 'name', kind: 'string' },
  2: { name: 'generateName', kind: 'string' },
  3: { name: 'namespace', kind: 'string' },
  5: { name: 'uid', kind: 'string' },
  6: { name: 'resourceVersion', kind: 'string' },
  7: { name: 'generation', kind: 'int64' },
  8: { name: 'creationTimestamp', kind: 'time' },
  11: { name: 'labels', kind: 'map-string' },
  12: { name: 'annotations', kind: 'map-string' },
  13: { name: 'ownerReferences', kind: 'repeated-message', message: OWNER_REFERENCE },
  14: { name: 'finalizers', kind: 'repeated-string' },
};

const META: Field = { name: 'metadata', kind: 'message', message: OBJECT_META };

const SERVICE_PORT: MessageSpec = {
  1: { name: 'name', kind: 'string' },
  2: { name: 'protocol', kind: 'string' },
  3: { name: 'port', kind: 'int64' },
  4: { name: 'targetPort', kind: 'int-or-string' },
  5: { name: 'nodePort', kind: 'int64' },
  6: { name: 'appProtocol', kind: 'string' },
};

const RESOURCE_ATTRIBUTES: MessageSpec = {
  1: { name: 'namespace', kind: 'string' },
  2: { name: 'verb', kind: 'string' },
  3: { name: 'group', kind: 'string' },
  4: { name: 'version', kind: 'string' },
  5: { name: 'resource', kind: 'string' },
  6: { name: 'subresource', kind: 'string' },
  7: { name: 'name', kind: 'string' },
};

const ACCESS_REVIEW: MessageSpec = {
  1: META,
  2: {
    name: 'spec',
    kind: 'message',
    message: {
      1: { name: 'resourceAttributes', kind: 'message', message: RESOURCE_ATTRIBUTES },
      2: { name: 'nonResourceAttributes', kind: 'message', message: { 1: { name: 'path', kind: 'string' }, 2: { name: 'verb', kind: 'string' } } },
    },
  },
};

const DELETE_OPTIONS: MessageSpec = {
  1: { name: 'gracePeriodSeconds', kind: 'int64' },
  2: { name: 'preconditions', kind: 'message', message: { 1: { name: 'uid', kind: 'string' }, 2: { name: 'resourceVersion', kind: 'string' } } },
  3: { name: 'orphanDependents', kind: 'bool' },
  4: { name: 'propagationPolicy', kind: 'string' },
  5: { name: 'dryRun', kind: 'repeated-string' },
};

/** Kinds by "apiVersion/kind". */
const KINDS: Record<string, MessageSpec> = {
  // typed clients (Helm's release storage among them) send the body of a DELETE as protobuf
  'v1/DeleteOptions': DELETE_OPTIONS,
  'meta.k8s.io/v1/DeleteOptions': DELETE_OPTIONS,
  'v1/Service': {
    1: META,
    2: {
      name: 'spec',
      kind: 'message',
      message: {
        1: { name: 'ports', kind: 'repeated-message', message: SERVICE_PORT },
        2: { name: 'selector', kind: 'map-string' },
        3: { name: 'clusterIP', kind: 'string' },
        4: { name: 'type', kind: 'string' },
        5: { name: 'externalIPs', kind: 'repeated-string' },
        7: { name: 'sessionAffinity', kind: 'string' },
        10: { name: 'externalName', kind: 'string' },
        18: { name: 'clusterIPs', kind: 'repeated-string' },
      },
    },
  },
  'authorization.k8s.io/v1/SelfSubjectAccessReview': ACCESS_REVIEW,
  'authorization.k8s.io/v1/SelfSubjectRulesReview': { 1: META, 2: { name: 'spec', kind: 'message', message: { 1: { name: 'namespace', kind: 'string' } } } },
  'authentication.k8s.io/v1/SelfSubjectReview': { 1: META },
  'authentication.k8s.io/v1/TokenRequest': {
    1: META,
    2: {
      name: 'spec',
      kind: 'message',
      message: {
        1: { name: 'audiences', kind: 'repeated-string' },
        3: { name: 'boundObjectRef', kind: 'message', message: { 1: { name: 'kind', kind: 'string' }, 2: { name: 'apiVersion', kind: 'string' }, 3: { name: 'name', kind: 'string' }, 4: { name: 'uid', kind: 'string' } } },
        4: { name: 'expirationSeconds', kind: 'int64' },
      },
    },
  },
  'v1/ServiceAccount': {
    1: META,
    3: { name: 'imagePullSecrets', kind: 'repeated-message', message: { 1: { name: 'name', kind: 'string' } } },
    4: { name: 'automountServiceAccountToken', kind: 'bool' },
  },
  'authentication.k8s.io/v1beta1/SelfSubjectReview': { 1: META },
  'v1/Namespace': {
    1: META,
    2: { name: 'spec', kind: 'message', message: { 1: { name: 'finalizers', kind: 'repeated-string' } } },
    3: { name: 'status', kind: 'message', message: { 1: { name: 'phase', kind: 'string' } } },
  },
  'v1/ConfigMap': {
    1: META,
    2: { name: 'data', kind: 'map-string' },
    3: { name: 'binaryData', kind: 'map-bytes' },
    4: { name: 'immutable', kind: 'bool' },
  },
  'v1/Secret': {
    1: META,
    2: { name: 'data', kind: 'map-bytes' },
    3: { name: 'type', kind: 'string' },
    4: { name: 'stringData', kind: 'map-string' },
    5: { name: 'immutable', kind: 'bool' },
  },
};

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const byte = this.buf[this.pos++] as number;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw new Error('varint too long');
    }
  }
  bytes(): Buffer {
    const len = Number(this.varint());
    if (this.pos + len > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
  }
}

/** Raw (field number → values) view of one message. */
function fields(buf: Buffer): Map<number, Array<bigint | Buffer>> {
  const out = new Map<number, Array<bigint | Buffer>>();
  const r = new Reader(buf);
  while (!r.done) {
    const key = Number(r.varint());
    const number = key >>> 3;
    const wire = key & 7;
    let value: bigint | Buffer;
    if (wire === 0) value = r.varint();
    else if (wire === 2) value = r.bytes();
    else {
      r.skip(wire);
      continue;
    }
    const list = out.get(number) ?? [];
    list.push(value);
    out.set(number, list);
  }
  return out;
}

function mapEntry(buf: Buffer): [string, Buffer] {
  const f = fields(buf);
  const key = f.get(1)?.[0];
  const value = f.get(2)?.[0];
  return [Buffer.isBuffer(key) ? key.toString('utf8') : '', Buffer.isBuffer(value) ? value : Buffer.alloc(0)];
}

function decodeMessage(buf: Buffer, spec: MessageSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [number, values] of fields(buf)) {
    const field = spec[number];
    if (!field) continue;
    const last = values[values.length - 1];
    const bytes = (v: bigint | Buffer | undefined): Buffer => (Buffer.isBuffer(v) ? v : Buffer.alloc(0));
    switch (field.kind) {
      case 'string': {
        // Go omits empty strings from JSON (omitempty); protobuf carries them
        const text = bytes(last).toString('utf8');
        if (text !== '') out[field.name] = text;
        break;
      }
      case 'bytes-base64':
        out[field.name] = bytes(last).toString('base64');
        break;
      case 'int64':
        if (typeof last === 'bigint' && last !== 0n) out[field.name] = Number(BigInt.asIntN(64, last));
        break;
      case 'bool':
        if (last === 1n) out[field.name] = true;
        break;
      case 'time': {
        const seconds = fields(bytes(last)).get(1)?.[0];
        if (typeof seconds !== 'bigint' || seconds === 0n) break;
        out[field.name] = new Date(Number(typeof seconds === 'bigint' ? seconds : 0n) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
        break;
      }
      case 'map-string':
      case 'map-bytes': {
        const map: Record<string, string> = {};
        for (const v of values) {
          const [k, value] = mapEntry(bytes(v));
          map[k] = field.kind === 'map-string' ? value.toString('utf8') : value.toString('base64');
        }
        if (Object.keys(map).length > 0) out[field.name] = map;
        break;
      }
      case 'repeated-string':
        if (values.length > 0) out[field.name] = values.map((v) => bytes(v).toString('utf8'));
        break;
      case 'message':
        out[field.name] = decodeMessage(bytes(last), field.message ?? {});
        break;
      case 'repeated-message':
        out[field.name] = values.map((v) => decodeMessage(bytes(v), field.message ?? {}));
        break;
      case 'int-or-string': {
        const f = fields(bytes(last));
        const isString = f.get(1)?.[0] === 1n;
        const intVal = f.get(2)?.[0];
        const strVal = f.get(3)?.[0];
        out[field.name] = isString ? (Buffer.isBuffer(strVal) ? strVal.toString('utf8') : '') : typeof intVal === 'bigint' ? Number(BigInt.asIntN(32, intVal)) : 0;
        break;
      }
    }
  }
  return out;
}

/** Decode a protobuf-encoded built-in object to its JSON form; 415 for kinds this server cannot read. */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  const unsupported = (why: string): ApiError =>
    new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (${why})`);
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw unsupported('missing protobuf envelope');
  try {
    const unknown = fields(body.subarray(4));
    const typeMetaRaw = unknown.get(1)?.[0];
    const raw = unknown.get(2)?.[0];
    const typeMeta = Buffer.isBuffer(typeMetaRaw) ? fields(typeMetaRaw) : new Map<number, Array<bigint | Buffer>>();
    const apiVersion = (typeMeta.get(1)?.[0] as Buffer | undefined)?.toString('utf8') ?? '';
    const kind = (typeMeta.get(2)?.[0] as Buffer | undefined)?.toString('utf8') ?? '';
    const spec = KINDS[`${apiVersion}/${kind}`];
    if (!spec) throw unsupported(`protobuf is not supported for ${apiVersion}/${kind}`);
    return { apiVersion, kind, ...decodeMessage(Buffer.isBuffer(raw) ? raw : Buffer.alloc(0), spec) };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(400, 'BadRequest', `unable to decode protobuf body: ${(err as Error).message}`);
  }
}

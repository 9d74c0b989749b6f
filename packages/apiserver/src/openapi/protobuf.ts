// GET /openapi/v2 as client-go asks for it: `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`.
// client-go decodes the answer as a gnostic openapi_v2.Document (google/gnostic openapiv2/OpenAPIv2.proto)
// and kubectl apply refuses to run (with its default --validate=strict) when that fails. This is a small
// protobuf writer for the subset of that message tree a Kubernetes Swagger document uses.

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A protobuf message being written (proto3 rules: zero values are omitted, sub-messages always written). */
class Message {
  private readonly chunks: Buffer[] = [];

  private varint(value: number): void {
    const bytes: number[] = [];
    let v = BigInt(Math.trunc(value));
    if (v < 0n) v += 1n << 64n;
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) byte |= 0x80;
      bytes.push(byte);
    } while (v > 0n);
    this.chunks.push(Buffer.from(bytes));
  }

  private tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  string(field: number, value: unknown): this {
    if (typeof value !== 'string' || value === '') return this;
    const bytes = Buffer.from(value, 'utf8');
    this.tag(field, 2);
    this.varint(bytes.length);
    this.chunks.push(bytes);
    return this;
  }

  strings(field: number, values: unknown): this {
    if (Array.isArray(values)) for (const v of values) if (typeof v === 'string') this.bytesOf(field, Buffer.from(v, 'utf8'));
    return this;
  }

  private bytesOf(field: number, bytes: Buffer): void {
    this.tag(field, 2);
    this.varint(bytes.length);
    this.chunks.push(bytes);
  }

  bool(field: number, value: unknown): this {
    if (value !== true) return this;
    this.tag(field, 0);
    this.varint(1);
    return this;
  }

  int64(field: number, value: unknown): this {
    if (typeof value !== 'number' || value === 0) return this;
    this.tag(field, 0);
    this.varint(value);
    return this;
  }

  double(field: number, value: unknown): this {
    if (typeof value !== 'number' || value === 0) return this;
    this.tag(field, 1);
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleLE(value);
    this.chunks.push(bytes);
    return this;
  }

  message(field: number, message: Message | undefined): this {
    if (message) this.bytesOf(field, message.bytes());
    return this;
  }

  messages(field: number, messages: Message[]): this {
    for (const m of messages) this.message(field, m);
    return this;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** openapi_v2.Any: gnostic keeps arbitrary JSON values as YAML text (JSON is YAML). */
const anyValue = (value: unknown): Message => new Message().string(2, JSON.stringify(value));

/** Vendor extensions (x-*) as repeated NamedAny. */
function vendorExtensions(object: Json): Message[] {
  return Object.entries(object)
    .filter(([key]) => key.startsWith('x-'))
    .map(([key, value]) => new Message().string(1, key).message(2, anyValue(value)));
}

function schema(s: Json): Message {
  const m = new Message()
    .string(1, s.$ref)
    .string(2, s.format)
    .string(3, s.title)
    .string(4, s.description);
  if (s.default !== undefined) m.message(5, anyValue(s.default));
  m.double(6, s.multipleOf)
    .double(7, s.maximum)
    .bool(8, s.exclusiveMaximum)
    .double(9, s.minimum)
    .bool(10, s.exclusiveMinimum)
    .int64(11, s.maxLength)
    .int64(12, s.minLength)
    .string(13, s.pattern)
    .int64(14, s.maxItems)
    .int64(15, s.minItems)
    .bool(16, s.uniqueItems)
    .int64(17, s.maxProperties)
    .int64(18, s.minProperties)
    .strings(19, s.required);
  if (Array.isArray(s.enum)) m.messages(20, s.enum.map(anyValue));
  if (isRecord(s.additionalProperties)) m.message(21, new Message().message(1, schema(s.additionalProperties)));
  else if (typeof s.additionalProperties === 'boolean') m.message(21, new Message().bool(2, s.additionalProperties));
  if (typeof s.type === 'string') m.message(22, new Message().strings(1, [s.type]));
  else if (Array.isArray(s.type)) m.message(22, new Message().strings(1, s.type));
  if (isRecord(s.items)) m.message(23, new Message().message(1, schema(s.items)));
  if (Array.isArray(s.allOf)) m.messages(24, s.allOf.filter(isRecord).map(schema));
  if (isRecord(s.properties)) {
    const named = Object.entries(s.properties)
      .filter((entry): entry is [string, Json] => isRecord(entry[1]))
      .map(([name, value]) => new Message().string(1, name).message(2, schema(value)));
    m.message(25, new Message().messages(1, named));
  }
  m.string(26, s.discriminator).bool(27, s.readOnly);
  if (s.example !== undefined) m.message(30, anyValue(s.example));
  return m.messages(31, vendorExtensions(s));
}

function parameter(p: Json): Message {
  if (p.in === 'body') {
    const body = new Message().string(1, p.description).string(2, p.name).string(3, p.in).bool(4, p.required);
    if (isRecord(p.schema)) body.message(5, schema(p.schema));
    body.messages(6, vendorExtensions(p));
    return new Message().message(1, new Message().message(1, body));
  }
  let nonBody: Message;
  if (p.in === 'path') {
    const sub = new Message().bool(1, p.required).string(2, p.in).string(3, p.description).string(4, p.name).string(5, p.type).string(6, p.format).bool(19, p.uniqueItems);
    nonBody = new Message().message(4, sub);
  } else if (p.in === 'header') {
    const sub = new Message().bool(1, p.required).string(2, p.in).string(3, p.description).string(4, p.name).string(5, p.type).string(6, p.format).bool(19, p.uniqueItems);
    nonBody = new Message().message(1, sub);
  } else {
    const sub = new Message().bool(1, p.required).string(2, p.in).string(3, p.description).string(4, p.name).string(6, p.type).string(7, p.format).bool(20, p.uniqueItems);
    nonBody = new Message().message(3, sub);
  }
  return new Message().message(1, new Message().message(2, nonBody));
}

function operation(op: Json): Message {
  const m = new Message()
    .strings(1, op.tags)
    .string(2, op.summary)
    .string(3, op.description)
    .string(5, op.operationId)
    .strings(6, op.produces)
    .strings(7, op.consumes);
  if (Array.isArray(op.parameters)) m.messages(8, op.parameters.filter(isRecord).map(parameter));
  if (isRecord(op.responses)) {
    const codes = Object.entries(op.responses)
      .filter((entry): entry is [string, Json] => isRecord(entry[1]))
      .map(([code, r]) => {
        const response = new Message().string(1, r.description);
        if (isRecord(r.schema)) response.message(2, new Message().message(1, schema(r.schema)));
        return new Message().string(1, code).message(2, new Message().message(1, response));
      });
    m.message(9, new Message().messages(1, codes));
  }
  return m.strings(10, op.schemes).bool(11, op.deprecated).messages(13, vendorExtensions(op));
}

const METHOD_FIELDS: Record<string, number> = { get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8 };

function pathItem(item: Json): Message {
  const m = new Message();
  for (const [method, field] of Object.entries(METHOD_FIELDS)) {
    const op = item[method];
    if (isRecord(op)) m.message(field, operation(op));
  }
  if (Array.isArray(item.parameters)) m.messages(9, item.parameters.filter(isRecord).map(parameter));
  return m.messages(10, vendorExtensions(item));
}

/** Encode a Swagger 2.0 JSON document (as produced by openApiV2) as a gnostic openapi_v2.Document. */
export function encodeOpenApiV2(document: object): Buffer {
  const doc = document as Json;
  const info = isRecord(doc.info) ? doc.info : {};
  const m = new Message()
    .string(1, doc.swagger)
    .message(2, new Message().string(1, info.title).string(2, info.version).string(3, info.description))
    .string(3, doc.host)
    .string(4, doc.basePath)
    .strings(5, doc.schemes)
    .strings(6, doc.consumes)
    .strings(7, doc.produces);
  const paths = isRecord(doc.paths) ? doc.paths : {};
  const namedPaths = Object.entries(paths)
    .filter((entry): entry is [string, Json] => isRecord(entry[1]))
    .map(([path, item]) => new Message().string(1, path).message(2, pathItem(item)));
  m.message(8, new Message().messages(2, namedPaths));
  const definitions = isRecord(doc.definitions) ? doc.definitions : {};
  const named = Object.entries(definitions)
    .filter((entry): entry is [string, Json] => isRecord(entry[1]))
    .map(([name, value]) => new Message().string(1, name).message(2, schema(value)));
  m.message(9, new Message().messages(1, named));
  if (Array.isArray(doc.security)) {
    m.messages(
      12,
      doc.security.filter(isRecord).map((requirement) =>
        new Message().messages(
          1,
          Object.entries(requirement).map(([name, scopes]) => new Message().string(1, name).message(2, new Message().strings(1, scopes))),
        ),
      ),
    );
  }
  if (isRecord(doc.securityDefinitions)) {
    const items = Object.entries(doc.securityDefinitions)
      .filter((entry): entry is [string, Json] => isRecord(entry[1]))
      .map(([name, def]) => {
        const apiKey = new Message().string(1, def.type).string(2, def.name).string(3, def.in).string(4, def.description);
        return new Message().string(1, name).message(2, new Message().message(2, apiKey));
      });
    m.message(13, new Message().messages(1, items));
  }
  return m.bytes();
}

/** The media type client-go asks /openapi/v2 for. */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

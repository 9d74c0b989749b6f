/** `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`: objects as rows of printer columns. */
import type { KubeObject } from '../../types.js';
import { isObject, metadataOf } from '../../util.js';
import type { PrinterColumn, ResourceType, ResourceVersion } from '../../registry/types.js';
import { ageOf } from './duration.js';
import { evaluateJsonPath } from './jsonpath.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableRequest {
  apiVersion: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';
  includeObject: IncludeObject;
}

/** The Table media type the client asked for, if any (v1 preferred over v1beta1). */
export function tableRequested(accept: string | undefined, includeObject: string | null): TableRequest | undefined {
  if (!accept) return undefined;
  const offers = accept.split(',').map((part) => part.trim().toLowerCase().replace(/\s+/g, ''));
  let apiVersion: TableRequest['apiVersion'] | undefined;
  for (const offer of offers) {
    if (!offer.includes('as=table') || !offer.includes('g=meta.k8s.io')) continue;
    if (offer.includes('v=v1;') || offer.endsWith('v=v1')) {
      apiVersion = 'meta.k8s.io/v1';
      break;
    }
    if (offer.includes('v=v1beta1')) apiVersion ??= 'meta.k8s.io/v1beta1';
  }
  if (!apiVersion) return undefined;
  const include: IncludeObject = includeObject === 'Object' || includeObject === 'None' ? includeObject : 'Metadata';
  return { apiVersion, includeObject: include };
}

interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

const NAME_COLUMN: ColumnDefinition = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  priority: 0,
};

function columnsFor(type: ResourceType, version: ResourceVersion): PrinterColumn[] {
  if (version.printerColumns.length > 0) return version.printerColumns;
  return [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
}

function definition(column: PrinterColumn): ColumnDefinition {
  const builtinFormat = column.format && ['name', 'age', 'count', 'data-count', 'event-last-seen', 'object-ref', 'timestamp', 'external-ip', 'ports', 'ready-of-replicas', 'role-ref', 'or-na'].includes(column.format);
  return {
    name: column.name,
    type: column.type === 'date' || column.format === 'age' ? (column.format === 'timestamp' ? 'string' : 'date') : column.type,
    format: builtinFormat ? '' : (column.format ?? ''),
    description: column.description ?? '',
    priority: column.priority ?? 0,
  };
}

function cell(column: PrinterColumn, obj: KubeObject, now: number): unknown {
  if (column.format === 'age') return ageOf(metadataOf(obj)['creationTimestamp'], now);
  const results = evaluateJsonPath(column.jsonPath, obj);
  const value = results[0];
  switch (column.format) {
    case 'count':
      return Array.isArray(value) ? value.length : isObject(value) ? Object.keys(value).length : 0;
    case 'data-count':
      return (isObject(obj['data']) ? Object.keys(obj['data']).length : 0) + (isObject(obj['binaryData']) ? Object.keys(obj['binaryData']).length : 0);
    case 'event-last-seen': {
      const meta = metadataOf(obj);
      return ageOf(value ?? obj['eventTime'] ?? obj['lastTimestamp'] ?? meta['creationTimestamp'], now);
    }
    case 'object-ref':
      return isObject(value) ? `${String(value['kind'] ?? '').toLowerCase()}/${String(value['name'] ?? '')}` : '';
    case 'timestamp':
      return typeof value === 'string' ? value : '';
    case 'external-ip': {
      const ingress = isObject(value) && Array.isArray(value['ingress']) ? value['ingress'].filter(isObject) : [];
      const ips = ingress.map((i) => String(i['ip'] ?? i['hostname'] ?? '')).filter(Boolean);
      return ips.length > 0 ? ips.join(',') : '<none>';
    }
    case 'ready-of-replicas': {
      const spec = isObject(obj['spec']) ? obj['spec'] : {};
      return `${typeof value === 'number' ? value : 0}/${typeof spec['replicas'] === 'number' ? spec['replicas'] : 1}`;
    }
    case 'or-na':
      return value === undefined || value === null ? 'N/A' : String(value);
    case 'role-ref':
      return isObject(value) ? `${String(value['kind'] ?? '')}/${String(value['name'] ?? '')}` : '';
    case 'ports': {
      const ports = Array.isArray(value) ? value.filter(isObject) : [];
      if (ports.length === 0) return '<none>';
      return ports.map((p) => `${String(p['port'] ?? '')}${p['nodePort'] ? `:${String(p['nodePort'])}` : ''}/${String(p['protocol'] ?? 'TCP')}`).join(',');
    }
  }
  if (value === undefined || value === null) return null;
  switch (column.type) {
    case 'date':
      return ageOf(value, now);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    default:
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

function rowObject(obj: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: metadataOf(obj) };
}

/** Build a Table of `objects` (already in the requested version). */
export function toTable(
  objects: KubeObject[],
  type: ResourceType,
  version: ResourceVersion,
  request: TableRequest,
  listMeta: Record<string, unknown>,
): KubeObject {
  const columns = columnsFor(type, version);
  // the object name leads unless the kind places it itself (events)
  const nameFirst = !columns.some((c) => c.format === 'name');
  const now = Date.now();
  const rows = objects.map((obj) => {
    const cells = columns.map((c) => cell(c, obj, now));
    const row: Record<string, unknown> = { cells: nameFirst ? [metadataOf(obj)['name'] ?? '', ...cells] : cells };
    const object = rowObject(obj, request.includeObject);
    if (object !== undefined) row['object'] = object;
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: request.apiVersion,
    metadata: listMeta,
    columnDefinitions: nameFirst ? [NAME_COLUMN, ...columns.map(definition)] : columns.map(definition),
    rows,
  };
}

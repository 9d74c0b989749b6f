import { XMLParser } from 'fast-xml-parser';
import { S3Errors } from './errors.js';

/** The S3 namespace every response document declares. */
export const S3_XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';

/** An element with ordered children, as S3 documents interleave repeated elements (Version, DeleteMarker). */
export type XmlElement = readonly [name: string, content: XmlContent];
export type XmlContent = string | number | boolean | undefined | readonly XmlElement[];

/** A parsed XML document: elements become keys; repeated elements (see ARRAY_ELEMENTS) become arrays. */
export type ParsedXml = { [name: string]: ParsedValue };
export type ParsedValue = string | ParsedXml | ParsedValue[];

// Elements S3 allows to repeat; parsing them always as arrays keeps handlers simple.
const ARRAY_ELEMENTS = new Set(['Tag', 'Rule', 'Object', 'Transition', 'NoncurrentVersionTransition', 'Part']);

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => ARRAY_ELEMENTS.has(name),
});

/** Parses a request body; a body that is not XML, or lacks the expected root, is MalformedXML as on S3. */
export function parseXmlBody(body: string, root: string): ParsedXml {
  let document: unknown;
  try {
    document = parser.parse(body, true);
  } catch {
    throw S3Errors.malformedXml();
  }
  const element = isParsedXml(document) ? document[root] : undefined;
  if (element === '') return {};
  if (!isParsedXml(element)) throw S3Errors.malformedXml();
  return element;
}

export function isParsedXml(value: unknown): value is ParsedXml {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The text of a child element, or undefined when absent. */
export function text(parent: ParsedXml, name: string): string | undefined {
  const value = parent[name];
  return typeof value === 'string' ? value : undefined;
}

/** Child elements as a list (absent = empty). */
export function children(parent: ParsedXml, name: string): ParsedXml[] {
  const value = parent[name];
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.map((item) => (isParsedXml(item) ? item : {}));
}

/** Converts a parsed (stored) document back into ordered elements, for round-tripping configurations. */
export function fromParsed(value: ParsedXml): XmlElement[] {
  const elements: XmlElement[] = [];
  for (const [name, child] of Object.entries(value)) {
    const items = Array.isArray(child) ? child : [child];
    for (const item of items) {
      if (Array.isArray(item)) continue;
      elements.push([name, typeof item === 'string' ? item : fromParsed(item)]);
    }
  }
  return elements;
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

function renderContent(content: XmlContent): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return escapeXml(content);
  if (typeof content === 'number' || typeof content === 'boolean') return String(content);
  return content.filter(([, value]) => value !== undefined).map(([name, value]) => `<${name}>${renderContent(value)}</${name}>`).join('');
}

/** A complete response document with the XML declaration and the S3 namespace on the root. */
export function xmlDocument(root: string, content: XmlContent): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="${S3_XMLNS}">${renderContent(content)}</${root}>`;
}

/** An `<Error>` document (error documents carry no namespace). */
export function errorDocument(code: string, message: string, details: Record<string, string>, requestId: string): string {
  const elements: XmlElement[] = [['Code', code], ['Message', message], ...Object.entries(details), ['RequestId', requestId], ['HostId', requestId]];
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${renderContent(elements)}</Error>`;
}

import { ADMISSION_API_VERSION } from '../admission/types.js';

const str = { type: 'string' } as const;

/**
 * The part of an AdmissionReview v1 the webhook relies on; fastify validates
 * every body against it before a handler runs. The objects themselves are
 * only required to be objects: their rules are the admission rules' business.
 */
export const admissionReviewSchema = {
  $id: 'AdmissionReview',
  type: 'object',
  required: ['apiVersion', 'kind', 'request'],
  properties: {
    apiVersion: { type: 'string', const: ADMISSION_API_VERSION },
    kind: { type: 'string', const: 'AdmissionReview' },
    request: {
      type: 'object',
      required: ['uid', 'kind', 'operation'],
      properties: {
        uid: { type: 'string', minLength: 1, maxLength: 256 },
        kind: {
          type: 'object',
          required: ['group', 'version', 'kind'],
          properties: { group: str, version: str, kind: str },
        },
        resource: { type: 'object', properties: { group: str, version: str, resource: str } },
        subResource: str,
        name: str,
        namespace: str,
        operation: { type: 'string', enum: ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] },
        object: { type: ['object', 'null'] },
        oldObject: { type: ['object', 'null'] },
        dryRun: { type: 'boolean' },
      },
    },
  },
} as const;

/** The response shape, so fastify serialises exactly these fields and nothing else. */
export const admissionResponseSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'response'],
  properties: {
    apiVersion: str,
    kind: str,
    response: {
      type: 'object',
      required: ['uid', 'allowed'],
      properties: {
        uid: str,
        allowed: { type: 'boolean' },
        patchType: str,
        patch: str,
        warnings: { type: 'array', items: str },
        status: {
          type: 'object',
          properties: {
            code: { type: 'integer' },
            reason: str,
            message: str,
            details: {
              type: 'object',
              properties: {
                name: str,
                kind: str,
                group: str,
                causes: { type: 'array', items: { type: 'object', properties: { reason: str, message: str, field: str } } },
              },
            },
          },
        },
      },
    },
  },
} as const;

/** Body of every 4xx/5xx answer that is not a review. */
export const errorSchema = {
  type: 'object',
  properties: { statusCode: { type: 'integer' }, error: str, code: str, message: str },
} as const;

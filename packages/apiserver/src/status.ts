/** Kubernetes `Status` bodies and the error type that carries one through the handlers. */

export interface StatusCause { reason?: string; message?: string; field?: string }
export interface StatusDetails { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number }
export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** An error answered to the client as a `Status` with the given HTTP code. */
export class ApiError extends Error {
  readonly status: StatusBody;
  /** Admission warnings to send along with the error. */
  warnings: string[] = [];
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
    if (details) this.status.details = details;
    if (!reason) delete this.status.reason;
  }
  get code(): number {
    return this.status.code;
  }
}

/** How the real server names a resource in messages: `buckets.k8or.io` or `configmaps`. */
export function qualifiedResource(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

export function notFound(group: string, resource: string, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(group, resource)} "${name}" not found`, { name, group, kind: resource });
}

export function alreadyExists(group: string, resource: string, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(group, resource)} "${name}" already exists`, { name, group, kind: resource });
}

export function conflict(group: string, resource: string, name: string, why: string): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(group, resource)} "${name}": ${why}`, { name, group, kind: resource });
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function methodNotAllowed(message = 'the server does not allow this method on the requested resource'): ApiError {
  return new ApiError(405, 'MethodNotAllowed', message);
}

export function forbidden(group: string, resource: string, name: string, why: string): ApiError {
  const subject = name ? `${qualifiedResource(group, resource)} "${name}"` : qualifiedResource(group, resource);
  return new ApiError(403, 'Forbidden', `${subject} is forbidden: ${why}`, { name, group, kind: resource });
}

export function gone(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

/** A field-level validation failure, as in k8s.io/apimachinery/pkg/util/validation/field. */
export interface FieldCause { field: string; reason: string; message: string }

/**
 * 422 Invalid, message formatted like the real server:
 * `Kind.group "name" is invalid: field: message` (several causes are bracketed and comma-joined).
 */
export function invalid(kind: string, group: string, name: string, causes: FieldCause[]): ApiError {
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const joined = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${joined}`, {
    name,
    group,
    kind,
    causes: causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })),
  });
}

export function successStatus(details?: StatusDetails): StatusBody {
  const body: StatusBody = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 };
  if (details) body.details = details;
  return body;
}

/** Wrap anything thrown by a handler as a Status (unexpected errors become 500 InternalError). */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`);
}

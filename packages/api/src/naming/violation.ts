/** One broken rule: which field, which rule (a stable identifier), and a message a user can act on. */
export interface Violation {
  /** Field path, such as `spec.name`. */
  field: string;
  /** Stable rule identifier, such as `s3.length`. */
  rule: string;
  message: string;
}

/** A naming rule check: the name, and the field path to report it under. */
export type NameValidator = (name: string, field?: string) => Violation[];

/** Builds violations for one field while checking a list of rules in order. */
export class ViolationCollector {
  readonly violations: Violation[] = [];
  constructor(private readonly field: string) {}

  check(ok: boolean, rule: string, message: string): this {
    if (!ok) this.violations.push({ field: this.field, rule, message });
    return this;
  }
}

/** Dotted-quad IPv4 address, as the clouds forbid it for bucket names. */
export const IPV4_ADDRESS = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Formats violations as `field: message (rule)`, one per line. */
export function formatViolations(violations: readonly Violation[]): string {
  return violations.map((v) => `${v.field}: ${v.message} (rule ${v.rule})`).join('\n');
}

import { ViolationCollector, type Violation } from './violation.js';

/** Bigtable table ID rules (cloud.google.com/bigtable/docs/reference/admin/rpc: `[_a-zA-Z0-9][-_.a-zA-Z0-9]*`, at most 50). */
export function validateBigtableTableName(name: string, field = 'spec.name'): Violation[] {
  const c = new ViolationCollector(field);
  c.check(name.length >= 1 && name.length <= 50, 'bigtable.length', `Bigtable table IDs must be 1 to 50 characters long; "${name}" has ${name.length}`);
  c.check(/^[-_.a-zA-Z0-9]*$/.test(name), 'bigtable.characters', 'Bigtable table IDs may contain only letters, digits, hyphen (-), underscore (_) and dot (.)');
  c.check(name.length === 0 || /^[_a-zA-Z0-9]/.test(name), 'bigtable.start', 'Bigtable table IDs must start with a letter, digit or underscore');
  return c.violations;
}

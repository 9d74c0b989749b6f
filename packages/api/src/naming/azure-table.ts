import { ViolationCollector, type Violation } from './violation.js';

/**
 * Azure Table Storage table naming rules
 * (learn.microsoft.com/rest/api/storageservices/understanding-the-table-service-data-model#table-names).
 */
export function validateAzureTableName(name: string, field = 'spec.name'): Violation[] {
  const c = new ViolationCollector(field);
  c.check(name.length >= 3 && name.length <= 63, 'azure-table.length', `Azure table names must be 3 to 63 characters long; "${name}" has ${name.length}`);
  c.check(/^[A-Za-z0-9]*$/.test(name), 'azure-table.characters', 'Azure table names may contain only letters and digits');
  c.check(!/^[0-9]/.test(name), 'azure-table.start', 'Azure table names cannot begin with a digit');
  c.check(name.toLowerCase() !== 'tables', 'azure-table.reserved', 'Azure table name "tables" is reserved');
  return c.violations;
}

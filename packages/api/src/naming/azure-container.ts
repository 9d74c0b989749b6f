import { ViolationCollector, type Violation } from './violation.js';

/**
 * Azure Blob container naming rules
 * (learn.microsoft.com/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata).
 */
export function validateAzureContainerName(name: string, field = 'spec.name'): Violation[] {
  const c = new ViolationCollector(field);
  c.check(name.length >= 3 && name.length <= 63, 'azure-container.length', `Azure container names must be 3 to 63 characters long; "${name}" has ${name.length}`);
  c.check(/^[a-z0-9-]*$/.test(name), 'azure-container.characters', 'Azure container names may contain only lowercase letters, digits and hyphens (-)');
  c.check(/^[a-z0-9]/.test(name), 'azure-container.start', 'Azure container names must start with a lowercase letter or digit');
  c.check(!name.endsWith('-'), 'azure-container.end', 'Azure container names must not end with a hyphen');
  c.check(!name.includes('--'), 'azure-container.consecutive-hyphens', 'Azure container names must not contain consecutive hyphens');
  return c.violations;
}

import { IPV4_ADDRESS, ViolationCollector, type Violation } from './violation.js';

/** "google" and the close misspellings Cloud Storage refuses. */
const GOOGLE_LIKE = /g[o0]{2}g[l1]e/;

/** Cloud Storage bucket naming rules (cloud.google.com/storage/docs/buckets#naming). */
export function validateGcsBucketName(name: string, field = 'spec.name'): Violation[] {
  const c = new ViolationCollector(field);
  const dotted = name.includes('.');
  if (dotted) {
    c.check(name.length >= 3 && name.length <= 222, 'gcs.length', `Cloud Storage bucket names with dots must be 3 to 222 characters long; "${name}" has ${name.length}`);
    const long = name.split('.').find((part) => part.length > 63 || part.length === 0);
    c.check(long === undefined, 'gcs.component-length', 'each dot-separated component of a Cloud Storage bucket name must be 1 to 63 characters long');
  } else {
    c.check(name.length >= 3 && name.length <= 63, 'gcs.length', `Cloud Storage bucket names must be 3 to 63 characters long; "${name}" has ${name.length}`);
  }
  c.check(/^[a-z0-9._-]*$/.test(name), 'gcs.characters', 'Cloud Storage bucket names may contain only lowercase letters, digits, dashes (-), underscores (_) and dots (.)');
  c.check(/^[a-z0-9]/.test(name) && /[a-z0-9]$/.test(name), 'gcs.edges', 'Cloud Storage bucket names must start and end with a lowercase letter or digit');
  c.check(!IPV4_ADDRESS.test(name), 'gcs.ip-address', 'Cloud Storage bucket names cannot be an IP address in dotted-decimal notation');
  c.check(!name.startsWith('goog'), 'gcs.goog-prefix', 'Cloud Storage bucket names cannot begin with the "goog" prefix');
  c.check(!GOOGLE_LIKE.test(name), 'gcs.google', 'Cloud Storage bucket names cannot contain "google" or close misspellings such as "g00gle"');
  return c.violations;
}

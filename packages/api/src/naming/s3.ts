import { IPV4_ADDRESS, ViolationCollector, type Violation } from './violation.js';

const RESERVED_PREFIXES = ['xn--', 'sthree-', 'amzn-s3-demo-'];
const RESERVED_SUFFIXES = ['-s3alias', '--ol-s3', '.mrap', '--x-s3', '--table-s3'];

/**
 * S3 general purpose bucket naming rules
 * (docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html).
 */
export function validateS3BucketName(name: string, field = 'spec.name'): Violation[] {
  const c = new ViolationCollector(field);
  c.check(name.length >= 3 && name.length <= 63, 's3.length', `S3 bucket names must be 3 to 63 characters long; "${name}" has ${name.length}`);
  c.check(/^[a-z0-9.-]*$/.test(name), 's3.characters', 'S3 bucket names may contain only lowercase letters, digits, dots (.) and hyphens (-)');
  c.check(/^[a-z0-9]/.test(name) && /[a-z0-9]$/.test(name), 's3.edges', 'S3 bucket names must begin and end with a lowercase letter or digit');
  c.check(!name.includes('..'), 's3.adjacent-dots', 'S3 bucket names must not contain two adjacent dots');
  c.check(!IPV4_ADDRESS.test(name), 's3.ip-address', 'S3 bucket names must not be formatted as an IP address');
  const prefix = RESERVED_PREFIXES.find((p) => name.startsWith(p));
  c.check(prefix === undefined, 's3.reserved-prefix', `S3 bucket names must not start with the reserved prefix "${prefix}"`);
  const suffix = RESERVED_SUFFIXES.find((s) => name.endsWith(s));
  c.check(suffix === undefined, 's3.reserved-suffix', `S3 bucket names must not end with the reserved suffix "${suffix}"`);
  return c.violations;
}

import { ViolationCollector, type Violation } from './violation.js';

/** DynamoDB table naming rules (docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html). */
export function validateDynamoDbTableName(name: string, field = 'spec.name'): Violation[] {
  const c = new ViolationCollector(field);
  c.check(name.length >= 3 && name.length <= 255, 'dynamodb.length', `DynamoDB table names must be 3 to 255 characters long; "${name}" has ${name.length}`);
  c.check(/^[A-Za-z0-9_.-]*$/.test(name), 'dynamodb.characters', 'DynamoDB table names may contain only letters, digits, underscore (_), hyphen (-) and dot (.)');
  return c.violations;
}

/** DynamoDB attribute names (keys, TTL attribute): 1 to 255 bytes of UTF-8. */
export function validateDynamoDbAttributeName(name: string, field: string): Violation[] {
  const bytes = Buffer.byteLength(name, 'utf8');
  return new ViolationCollector(field).check(bytes >= 1 && bytes <= 255, 'dynamodb.attribute-length', `DynamoDB attribute names must be 1 to 255 bytes long; "${name}" has ${bytes}`)
    .violations;
}

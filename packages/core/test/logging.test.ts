import { strict as assert } from 'node:assert';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger, resourceLogger } from '@k8or/core';

/** A logger writing into memory, and the parsed JSON lines it wrote. */
function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[]; raw: () => string } {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString('utf8');
      callback();
    },
  });
  const logger = createLogger({ level: 'debug', destination });
  return {
    logger,
    raw: () => text,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const SECRETS = ['AKIAEXAMPLEACCESSKEY', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'FwoGZXIvYXdzEXAMPLESESSION', 'hunter2', 'c2VjcmV0LWJhc2U2NA==', 'Bearer eyJhbGciOiJSUzI1NiJ9.secret', 'DefaultEndpointsProtocol=https;AccountName=x;AccountKey=Zm9vYmFy', 'azure-account-key-value'];

describe('createLogger', () => {
  it('writes JSON lines with level, message and bindings', () => {
    const { logger, lines } = capturingLogger();
    logger.info({ kind: 'Bucket' }, 'reconciled');
    const [line] = lines();
    assert.equal(line?.msg, 'reconciled');
    assert.equal(line?.kind, 'Bucket');
    assert.equal(line?.level, 30);
  });

  it('never writes credentials, whatever shape they are logged in', () => {
    const { logger, raw, lines } = capturingLogger();
    const credentials = { accessKeyId: SECRETS[0], secretAccessKey: SECRETS[1], sessionToken: SECRETS[2] };
    // A Kubernetes Secret as client-node returns it.
    logger.info({ secret: { kind: 'Secret', metadata: { name: 'aws-creds' }, data: { password: SECRETS[4] } } }, 'read credentials secret');
    // AWS credentials at the top level, nested once, and buried deep in a request description.
    logger.info(credentials, 'top level');
    logger.info({ credentials }, 'nested once');
    logger.debug({ request: { client: { config: { auth: { credentials } } } } }, 'deeply nested');
    logger.info({ headers: { authorization: SECRETS[5] }, password: SECRETS[3] }, 'http request');
    logger.warn({ azure: { connectionString: SECRETS[6], accountKey: SECRETS[7] } }, 'azure');
    // The same object referenced twice, and inside an array.
    logger.info({ first: credentials, second: credentials, all: [credentials] }, 'shared reference');
    // An error carrying credentials in its own fields.
    const error = Object.assign(new Error('AccessDenied'), { token: SECRETS[2], details: { secretAccessKey: SECRETS[1] } });
    logger.error({ err: error }, 'cloud call failed');
    logger.error(error);

    // Bindings of a child logger.
    logger.child({ connection: { accountKey: SECRETS[7] } }).info('child');

    const output = raw();
    for (const secret of SECRETS) assert.ok(!output.includes(secret), `a credential reached the log: ${secret}`);
    assert.equal(lines().length, 10);
    assert.match(output, /\[Redacted\]/);
    // What is not secret still gets through.
    assert.match(output, /aws-creds/);
    assert.match(output, /AccessDenied/);
  });

  it('leaves the logged objects themselves untouched', () => {
    const { logger } = capturingLogger();
    const credentials = { secretAccessKey: SECRETS[1] };
    logger.info({ credentials }, 'logged');
    assert.equal(credentials.secretAccessKey, SECRETS[1]);
  });

  it('gives each resource a child logger that carries its key', () => {
    const { logger, lines } = capturingLogger();
    const child = resourceLogger(logger, 'team-a/photos', { kind: 'Bucket' });
    child.info('creating');
    child.warn({ sessionToken: SECRETS[2] }, 'retrying');
    const [first, second] = lines();
    assert.equal(first?.resource, 'team-a/photos');
    assert.equal(first?.kind, 'Bucket');
    assert.equal(second?.resource, 'team-a/photos');
    assert.equal(second?.sessionToken, '[Redacted]');
  });
});

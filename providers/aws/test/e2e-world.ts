// The AWS world for end-to-end tests through the engine (@k8or/provider-testkit's ProviderWorld): the
// S3 fake and DynamoDB Local, a Secret and a ProviderConfig per access key pointing at them, and the
// engine running the AWS provider plugin.
import { awsProvider, destroyDynamoDbClients, destroyS3Clients } from '@k8or/provider-aws';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { startDynamoDbLocal, startS3Fake, type DynamoDbLocal, type S3Fake } from '@k8or/local-clouds';
import { ProviderWorld, SECRETS_NAMESPACE } from '@k8or/provider-testkit';
import type { Engine, EngineOptions } from '@k8or/core';

export { NAMESPACE, SECRETS_NAMESPACE, conditionOf, isReady, waitFor, type KubeEvent } from '@k8or/provider-testkit';

/**
 * Access keys, each with its Secret and a ProviderConfig of its name (`ours` is `default`): ours, one
 * every S3 request of which is denied, one that S3 throttles on demand, and one a test revokes.
 */
export const KEYS = { ours: 'AKIAK8ORE2E000000001', denied: 'AKIAK8ORDENIED000001', throttled: 'AKIAK8ORTHROTTLED001', revocable: 'AKIAK8ORREVOCABLE001' } as const;
export const SECRET_KEY = 'e2e-secret';
/** Another AWS account, for names taken by someone else. */
export const OTHER_ACCOUNT = { accessKeyId: 'AKIASOMEONEELSE00001', secretAccessKey: 'someone-else-secret' } as const;

export class AwsWorld extends ProviderWorld {
  readonly s3: S3Fake;
  readonly dynamodb: DynamoDbLocal;

  private constructor(sandbox: Sandbox, s3: S3Fake, dynamodb: DynamoDbLocal) {
    super(sandbox);
    this.s3 = s3;
    this.dynamodb = dynamodb;
  }

  static async start(): Promise<AwsWorld> {
    const [sandbox, s3, dynamodb] = await Promise.all([
      startSandbox(),
      startS3Fake({
        deniedAccessKeys: [KEYS.denied],
        // The revocable key is a second key of our own account (another IAM user, say).
        accounts: { [KEYS.ours]: 'k8or-e2e-account', [KEYS.revocable]: 'k8or-e2e-account' },
        // Signatures are verified: the engine must hand the provider the Secret's keys.
        credentials: { ...Object.fromEntries(Object.values(KEYS).map((key) => [key, SECRET_KEY])), [OTHER_ACCOUNT.accessKeyId]: OTHER_ACCOUNT.secretAccessKey },
      }),
      startDynamoDbLocal(),
    ]);
    const world = new AwsWorld(sandbox, s3, dynamodb);
    await world.arrange();
    for (const [name, accessKeyId] of Object.entries(KEYS)) {
      await world.createSecret(`aws-${name}`, { accessKeyId, secretAccessKey: SECRET_KEY });
      await world.createProviderConfig(name === 'ours' ? 'default' : name, {
        provider: 'aws',
        region: 'us-east-1',
        endpoints: { bucket: s3.endpoint, table: dynamodb.endpoint },
        credentials: { source: 'Secret', secretRef: { namespace: SECRETS_NAMESPACE, name: `aws-${name}` } },
      });
    }
    return world;
  }

  /** Runs the engine with the AWS provider plugin, with quick test timings. */
  async startEngine(options: Partial<EngineOptions> = {}): Promise<Engine> {
    return await this.runEngine({
      providers: new Map([['aws', awsProvider]]),
      // Sub-second k8or.io/resync-period annotations in these tests; production's floor is 10 s.
      resyncFloorMs: 100,
      operatorNamespace: SECRETS_NAMESPACE,
      ...options,
    });
  }

  async stop(): Promise<void> {
    await this.stopEngine();
    destroyS3Clients();
    destroyDynamoDbClients();
    await Promise.all([this.sandbox.stop(), this.s3.stop(), this.dynamodb.stop()]);
  }
}

// The local clouds the sandbox examples are made real in: the S3 fake, DynamoDB Local (behind its
// proxy), the GCS fake and, where cbtemulator is installed, the Bigtable emulator, all on 127.0.0.1.
import { startBigtableEmulator, startDynamoDbLocal, startGcsFake, startS3Fake } from '@k8or/local-clouds';
import type { LocalEndpoints } from './provider-settings.ts';

export { GCP_INSTANCE, GCP_PROJECT, SANDBOX_CREDENTIALS } from './provider-settings.ts';

export interface Backends extends LocalEndpoints {
  stop(): Promise<void>;
}

/** Starts every local backend (the Bigtable emulator only where it is installed). */
export async function startBackends(): Promise<Backends> {
  const stops: Array<() => Promise<unknown>> = [];
  const started = async <T extends { stop(): Promise<unknown> }>(start: () => Promise<T>): Promise<T> => {
    const backend = await start();
    stops.push(() => backend.stop());
    return backend;
  };
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop();
  };
  // started together (DynamoDB Local's JVM is the slow one); a failure stops those that started
  const [s3, dynamodb, gcs, bigtable] = await Promise.allSettled([
    started(() => startS3Fake()),
    started(() => startDynamoDbLocal()),
    started(() => startGcsFake()),
    started(() => startBigtableEmulator()),
  ]);
  if (s3.status === 'rejected' || dynamodb.status === 'rejected' || gcs.status === 'rejected') {
    await stopAll();
    throw [s3, dynamodb, gcs].find((r) => r.status === 'rejected')!.reason;
  }
  return {
    s3: s3.value.endpoint,
    dynamodb: dynamodb.value.endpoint,
    gcs: gcs.value.endpoint,
    bigtable: bigtable.status === 'fulfilled' ? bigtable.value.host : undefined,
    stop: stopAll,
  };
}

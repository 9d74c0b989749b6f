// What "converged, nothing leaked, nothing done twice, nothing lost" means, checked against the API
// server (the admin's view) and the clouds (the backends themselves, not the operator's proxies).
import { GetBucketVersioningCommand, HeadBucketCommand, ListBucketsCommand } from '@aws-sdk/client-s3';
import { DescribeTableCommand, DescribeTimeToLiveCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { waitFor } from '@k8or/core/testing';
import type { CloudClients } from './data.ts';
import { lostData } from './data.ts';
import { condition, type Entry, type Ledger } from './resources.ts';
import type { ReliabilityCluster } from './cluster.ts';

async function bucketExists(clients: CloudClients, bucket: string): Promise<boolean> {
  try {
    await clients.s3.send(new HeadBucketCommand({ Bucket: bucket }));
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'NotFound') return false;
    throw error;
  }
}

async function tableStatus(clients: CloudClients, table: string): Promise<string | undefined> {
  try {
    return (await clients.dynamodb.send(new DescribeTableCommand({ TableName: table }))).Table?.TableStatus ?? 'UNKNOWN';
  } catch (error) {
    if ((error as { name?: string }).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}

/** Why one resource has not reached its fate yet (empty: it has). */
async function entryProblems(cluster: ReliabilityCluster, ledger: Ledger, clients: CloudClients, entry: Entry): Promise<string[]> {
  const id = `${entry.kind}/${entry.name} (${entry.externalName}, ${entry.fate}, ${entry.deletionPolicy})`;
  const object = await ledger.read(entry);
  const inCloud = entry.kind === 'Bucket' ? await bucketExists(clients, entry.externalName) : (await tableStatus(clients, entry.externalName)) !== undefined;
  const problems: string[] = [];
  switch (entry.fate) {
    case 'live':
    case 'protected': {
      if (!object) return [`${id}: gone from the API server`];
      if (object.metadata.deletionTimestamp) problems.push(`${id}: terminating`);
      const ready = condition(object, 'Ready');
      const synced = condition(object, 'Synced');
      if (ready?.status !== 'True') problems.push(`${id}: Ready=${ready?.status} ${ready?.reason ?? ''} ${ready?.message ?? ''}`);
      if (synced?.status !== 'True') problems.push(`${id}: Synced=${synced?.status} ${synced?.reason ?? ''} ${synced?.message ?? ''}`);
      if (object.status?.observedGeneration !== object.metadata.generation) problems.push(`${id}: observedGeneration ${object.status?.observedGeneration} of generation ${object.metadata.generation}`);
      if (!inCloud) problems.push(`${id}: not in the cloud`);
      else if (entry.kind === 'Bucket') {
        const status = (await clients.s3.send(new GetBucketVersioningCommand({ Bucket: entry.externalName }))).Status;
        const want = entry.desired.versioning ? 'Enabled' : status === undefined ? undefined : 'Suspended';
        if (status !== want) problems.push(`${id}: versioning ${status ?? 'never enabled'} in S3, spec says ${entry.desired.versioning}`);
      } else {
        const ttl = (await clients.dynamodb.send(new DescribeTimeToLiveCommand({ TableName: entry.externalName }))).TimeToLiveDescription;
        const actual = ttl?.TimeToLiveStatus === 'ENABLED' ? ttl.AttributeName : undefined;
        if (actual !== entry.desired.ttlAttribute) problems.push(`${id}: TTL attribute ${actual ?? 'none'} in DynamoDB, spec says ${entry.desired.ttlAttribute ?? 'none'}`);
      }
      break;
    }
    case 'deleted':
      if (object) problems.push(`${id}: still in the API server (finalizers ${JSON.stringify(object.metadata.finalizers)}, Synced ${condition(object, 'Synced')?.reason ?? '-'}: ${condition(object, 'Synced')?.message ?? ''})`);
      if (entry.deletionPolicy === 'Delete' && inCloud) problems.push(`${id}: still in the cloud`);
      // (deleted before the operator created it, a Retain resource has nothing in the cloud to keep)
      if (entry.deletionPolicy === 'Retain' && !inCloud && createsOf(cluster, entry) > 0) problems.push(`${id}: Retain, but gone from the cloud`);
      break;
    case 'blocked': {
      if (!object) problems.push(`${id}: its finalizer went though the cloud resource holds data`);
      else {
        const synced = condition(object, 'Synced');
        if (!object.metadata.deletionTimestamp) problems.push(`${id}: not terminating`);
        if (synced?.reason !== 'DeletionBlocked') problems.push(`${id}: Synced reason ${synced?.reason ?? '-'}, not DeletionBlocked`);
      }
      if (!inCloud) problems.push(`${id}: deleted from the cloud with its data`);
      break;
    }
  }
  return problems;
}

/** Cloud resources no ledger entry accounts for (leaks), and every entry's problems. */
export async function convergenceProblems(cluster: ReliabilityCluster, ledger: Ledger, clients: CloudClients): Promise<string[]> {
  const problems: string[] = [];
  for (const entry of ledger.list()) problems.push(...(await entryProblems(cluster, ledger, clients, entry)));
  const expected = new Set(ledger.list((e) => e.fate !== 'deleted' || e.deletionPolicy === 'Retain').map((e) => `${e.kind}/${e.externalName}`));
  const buckets = (await clients.s3.send(new ListBucketsCommand({}))).Buckets ?? [];
  for (const bucket of buckets) if (!expected.has(`Bucket/${bucket.Name}`)) problems.push(`leaked bucket ${bucket.Name}`);
  const tables = (await clients.dynamodb.send(new ListTablesCommand({}))).TableNames ?? [];
  for (const table of tables) if (!expected.has(`Table/${table}`)) problems.push(`leaked table ${table}`);
  return problems;
}

/** Waits until every resource has reached its fate; the error lists what had not, and the operators' last words. */
export async function waitConverged(cluster: ReliabilityCluster, ledger: Ledger, clients: CloudClients, timeoutMs = 180_000): Promise<void> {
  let last: string[] = [];
  try {
    await waitFor(
      'every resource converged',
      async () => {
        last = await convergenceProblems(cluster, ledger, clients);
        return last.length === 0;
      },
      timeoutMs,
      250,
    );
  } catch {
    throw new Error(`not converged within ${timeoutMs / 1000} s:\n  ${last.join('\n  ')}\noperators:\n${cluster.operatorOutput(3000)}`);
  }
}

/** Successful cloud creates of one resource's external name, through the operator's endpoint. */
function createsOf(cluster: ReliabilityCluster, entry: Entry): number {
  return (entry.kind === 'Bucket' ? cluster.s3Proxy.succeeded('CreateBucket') : cluster.dynamodbProxy.succeeded('CreateTable')).get(entry.externalName) ?? 0;
}

/**
 * Cloud deletes that succeeded on resources whose cloud side must stay: `Retain`, a bucket holding
 * data without forceDelete, a table with deletionProtection, a `k8or.io/protect` resource.
 */
export function forbiddenDeletes(cluster: ReliabilityCluster, ledger: Ledger): string[] {
  const deletes = { Bucket: cluster.s3Proxy.succeeded('DeleteBucket'), Table: cluster.dynamodbProxy.succeeded('DeleteTable') };
  return ledger
    .list((e) => e.deletionPolicy === 'Retain' || e.fate === 'blocked' || e.fate === 'protected')
    .filter((e) => (deletes[e.kind].get(e.externalName) ?? 0) > 0)
    .map((e) => `${e.kind}/${e.name} (${e.externalName}, ${e.fate}, ${e.deletionPolicy}) was deleted from the cloud`);
}

/**
 * Cloud creates that succeeded more than once for one external name (the operator did something
 * twice), and resources in the cloud that were never created through the operator's endpoint.
 */
export function duplicateCreates(cluster: ReliabilityCluster, ledger: Ledger): string[] {
  const problems: string[] = [];
  for (const entry of ledger.list()) {
    const count = createsOf(cluster, entry);
    if (count > 1) problems.push(`${entry.kind}/${entry.name}: ${count} successful creates of ${entry.externalName}`);
    if (count === 0 && entry.fate !== 'deleted') problems.push(`${entry.kind}/${entry.name}: ${entry.externalName} exists but no create of it succeeded`);
  }
  return problems;
}

/** Data lost from any resource that held some. */
export async function dataLost(ledger: Ledger, clients: CloudClients): Promise<string[]> {
  const lost: string[] = [];
  for (const entry of ledger.list((e) => e.holdsData)) lost.push(...(await lostData(clients, entry)));
  return lost;
}

/** How many cloud writes (creates, deletes) the operator's proxies saw succeed, per operation. */
export function cloudWriteCounts(cluster: ReliabilityCluster): Record<string, number> {
  const total = (counts: Map<string, number>): number => [...counts.values()].reduce((a, b) => a + b, 0);
  return {
    CreateBucket: total(cluster.s3Proxy.succeeded('CreateBucket')),
    DeleteBucket: total(cluster.s3Proxy.succeeded('DeleteBucket')),
    CreateTable: total(cluster.dynamodbProxy.succeeded('CreateTable')),
    DeleteTable: total(cluster.dynamodbProxy.succeeded('DeleteTable')),
  };
}

// GCS buckets, straight at the GCS fake with the Cloud Storage client (Bigtable tables: ./bigtable.ts).
import { Storage } from '@google-cloud/storage';
import { DATA_PER_HOLDER, isNotFound, objectBody, type Store } from './store.ts';

export function gcsBuckets(endpoint: string, project: string): Store {
  const storage = new Storage({ apiEndpoint: endpoint, projectId: project });
  return {
    cloud: 'gcp',
    kind: 'Bucket',
    dialect: 'gcs',
    writes: { create: 'POST /b', delete: 'DELETE /b/NAME', settings: ['PATCH /b/NAME', 'PUT /b/NAME'] },
    // an observe: buckets.get; a create: buckets.insert, and buckets.get after a 409; an update:
    // buckets.get (for an observation it did not make) and buckets.patch; a delete: buckets.delete
    callsPerReconcile: 4,
    editable: true,
    exists: async (name) => (await storage.bucket(name).exists())[0],
    names: async () => (await storage.getBuckets())[0].map((bucket) => bucket.name),
    settingsProblems: async (entry) => {
      const problems: string[] = [];
      const [metadata] = await storage.bucket(entry.externalName).getMetadata();
      const versioning = metadata.versioning?.enabled === true;
      if (versioning !== (entry.desired.versioning ?? false)) problems.push(`versioning ${versioning} in GCS, spec says ${entry.desired.versioning}`);
      const round = (metadata.labels as Record<string, string> | undefined)?.['round'];
      if (round !== entry.desired.round) problems.push(`label round ${round ?? 'unset'} in the bucket's labels, spec says ${entry.desired.round ?? 'unset'}`);
      return problems;
    },
    writeData: async (entry) => {
      const bucket = storage.bucket(entry.externalName);
      for (let i = 0; i < DATA_PER_HOLDER; i++) await bucket.file(`data/${i}.txt`).save(objectBody(entry.externalName, i), { resumable: false });
    },
    lostData: async (entry) => {
      const bucket = storage.bucket(entry.externalName);
      const listed = await bucket.getFiles().catch((error: Error) => error);
      if (listed instanceof Error) return [`bucket ${entry.externalName}: ${listed.message}`];
      const lost: string[] = [];
      for (let i = 0; i < DATA_PER_HOLDER; i++) {
        const key = `data/${i}.txt`;
        const got = await bucket
          .file(key)
          .download()
          .then(([bytes]) => bytes.toString('utf8'))
          .catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
        if (got === undefined) lost.push(`gs://${entry.externalName}/${key}: missing`);
        else if (got !== objectBody(entry.externalName, i)) lost.push(`gs://${entry.externalName}/${key}: content changed`);
      }
      if (listed[0].length !== DATA_PER_HOLDER) lost.push(`bucket ${entry.externalName} lists ${listed[0].length} objects, not ${DATA_PER_HOLDER}`);
      return lost;
    },
  };
}

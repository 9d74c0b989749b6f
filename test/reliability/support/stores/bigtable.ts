// Bigtable tables, straight at Google's Bigtable emulator with the Bigtable client. The operator reaches
// the emulator through the gRPC recording proxy (`startGrpcCloudProxy`), which names its RPCs by method
// and table, so its creates, deletes and family changes are counted and can be killed in flight.
import { Bigtable } from '@google-cloud/bigtable';
import { DATA_PER_HOLDER, type Store } from './store.ts';

const NEVER_EXPIRES = new Date('2100-01-01T00:00:00Z');

export function bigtableTables(emulatorHost: string, project: string, instance: string): Store & { close(): Promise<void> } {
  const bigtable = new Bigtable({ projectId: project, apiEndpoint: emulatorHost, metricsEnabled: false, universeDomain: 'googleapis.com' });
  const admin = bigtable.admin.getTableAdminClient();
  const names = async (): Promise<string[]> => (await bigtable.instance(instance).getTables())[0].map((table) => table.id);
  return {
    cloud: 'gcp',
    kind: 'Table',
    dialect: 'bigtable',
    // UpdateTable: deletion protection; ModifyColumnFamilies: the families' GC rule (the TTL attribute)
    writes: { create: 'CreateTable', delete: 'DeleteTable', settings: ['ModifyColumnFamilies', 'UpdateTable'] },
    // an observe: GetTable; a delete: GetTable, UpdateTable (protection turned on behind k8or's back
    // off), DeleteTable: 1 + 3 + 1. (An update: ModifyColumnFamilies, UpdateTable: 1 + 2 + 1; a create:
    // CreateTable: 1 + 1 + 1.)
    callsPerReconcile: 5,
    // the suite's edit is the TTL attribute: the GCP provider's GC rule of family `d`, read back here
    editable: true,
    exists: async (name) => (await names()).includes(name),
    names,
    settingsProblems: async (entry) => {
      const [table] = await admin.getTable({ name: `projects/${project}/instances/${instance}/tables/${entry.externalName}`, view: 'FULL' }, { retry: null });
      // with ttlAttribute the provider's rule is a union (one version, or 1 s past the cell's timestamp); without, one version
      const gcRule = table.columnFamilies?.['d']?.gcRule;
      const rule = gcRule?.union ? 'union' : gcRule?.maxNumVersions ? 'maxNumVersions' : gcRule ? JSON.stringify(gcRule) : undefined;
      const want = entry.desired.ttlAttribute ? 'union' : 'maxNumVersions';
      return rule === want ? [] : [`family d's GC rule is ${rule ?? 'unset'}, spec's ttlAttribute ${entry.desired.ttlAttribute ?? 'unset'} asks for ${want}`];
    },
    writeData: async (entry) => {
      // Under a TTL attribute a writer stamps each cell with the item's expiry (the provider's simulated
      // cell TTL); these items never expire, so their cells carry a far-future time and outlive any edit.
      const cell = (value: string): { value: string; timestamp: Date } => ({ value, timestamp: NEVER_EXPIRES });
      const rows = Array.from({ length: DATA_PER_HOLDER }, (_, i) => ({ key: `item-${i}`, data: { d: { value: cell(String(i * 7)), owner: cell(entry.name) } } }));
      await bigtable.instance(instance).table(entry.externalName).insert(rows);
    },
    lostData: async (entry) => {
      try {
        const [rows] = await bigtable.instance(instance).table(entry.externalName).getRows();
        const lost: string[] = [];
        for (let i = 0; i < DATA_PER_HOLDER; i++) {
          const row = rows.find((r) => r.id === `item-${i}`);
          const cells = row?.data as Record<string, Record<string, Array<{ value: string }>>> | undefined;
          if (!row) lost.push(`${entry.externalName}[item-${i}]: missing`);
          else if (cells?.['d']?.['value']?.[0]?.value !== String(i * 7) || cells['d']['owner']?.[0]?.value !== entry.name) lost.push(`${entry.externalName}[item-${i}]: changed`);
        }
        if (rows.length !== DATA_PER_HOLDER) lost.push(`table ${entry.externalName} holds ${rows.length} rows, not ${DATA_PER_HOLDER}`);
        return lost;
      } catch (error) {
        return [`table ${entry.externalName}: ${String(error)}`];
      }
    },
    close: async () => {
      await admin.close();
      await bigtable.close();
    },
  };
}

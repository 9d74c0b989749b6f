// Bigtable tables, straight at Google's Bigtable emulator with the Bigtable client. The emulator speaks
// gRPC, which the recording proxies (HTTP) do not carry: the operator reaches it directly, so no call
// to it is counted or killed in flight (docs/reliability.md). A second CreateTable of a name is refused
// ALREADY_EXISTS by Bigtable itself, so no create can succeed twice there.
import { Bigtable } from '@google-cloud/bigtable';
import { DATA_PER_HOLDER, type Store } from './store.ts';

export function bigtableTables(emulatorHost: string, project: string, instance: string): Store & { close(): Promise<void> } {
  const bigtable = new Bigtable({ projectId: project, apiEndpoint: emulatorHost, metricsEnabled: false, universeDomain: 'googleapis.com' });
  const names = async (): Promise<string[]> => (await bigtable.instance(instance).getTables())[0].map((table) => table.id);
  return {
    cloud: 'gcp',
    kind: 'Table',
    dialect: undefined,
    writes: undefined,
    // nothing of a Bigtable table the portable spec edits that the suite reads back (no TTL attribute, no labels)
    editable: false,
    exists: async (name) => (await names()).includes(name),
    names,
    settingsProblems: async () => [],
    writeData: async (entry) => {
      const rows = Array.from({ length: DATA_PER_HOLDER }, (_, i) => ({ key: `item-${i}`, data: { d: { value: String(i * 7), owner: entry.name } } }));
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
      await bigtable.close();
    },
  };
}

// The history checker's own rules, on a made-up record (no cluster, no cloud): what stands under a
// name after the teardown is a leak unless the rules leave it, and the rules are judged by the
// objects that may have made it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ManagedObject } from './support/resources.ts';
import { Checker } from './support/history/checker.ts';
import type { ForeignHand } from './support/history/foreign.ts';
import type { Place } from './support/history/generator.ts';
import type { HistoryRecord, UserObject, Watched } from './support/history/record.ts';

const PLACE: Place = { cloud: 'gcp', kind: 'Table', place: 'gcp/Table@k8or-history', api: 'bigtable', taggable: false, protectable: true };
const NAME = 'h004gct1';

function table(name: string, created: number): UserObject {
  return { kind: 'Table', cloud: 'gcp', name, externalName: NAME, created, deleteAsked: created + 10_000, retain: false, adopt: [], providerConfig: [{ at: created, name: 'history-gcp' }] };
}

function checker(record: HistoryRecord): Checker {
  const hand = { place: PLACE.place, names: async () => [NAME] } as unknown as ForeignHand;
  return new Checker({ record, places: [PLACE], hands: () => hand, calls: () => [], creates: {}, deletes: {}, secrets: [], firstInstance: 'k8or-history' });
}

const object = (name: string, annotations: Record<string, string>): Watched['object'] =>
  ({ apiVersion: 'k8or.io/v1alpha1', kind: 'Table', metadata: { name, namespace: 'apps', annotations }, spec: { name: NAME } }) as unknown as Watched['object'];
const event = (about: string, reason: string, message: string): Watched['object'] =>
  ({ kind: 'Event', metadata: { name: `${about}.${reason}` }, involvedObject: { kind: 'Table', name: about }, reason, message }) as unknown as Watched['object'];

/**
 * table-1 makes the table and deletes it with itself; table-8 then names it again, its create times
 * out (its outcome never learned), and its delete leaves what stands under the name, saying in the
 * Event that nothing proves it its own (Bigtable tables have no tags).
 */
function history(): HistoryRecord {
  const record: HistoryRecord = { seed: 4, lines: [], others: [], objects: new Map(), bigtableInstance: new Map(), watched: [], disruptions: [] };
  record.objects.set('Table/table-1', table('table-1', 1_000));
  record.objects.set('Table/table-8', table('table-8', 20_000));
  return record;
}

async function leaks(withLeaveEvent: boolean): Promise<string[]> {
  const c = checker(history());
  const watch: Watched[] = [
    { at: 2_000, type: 'MODIFIED', object: object('table-1', { 'k8or.io/create-succeeded': 'x' }) },
    { at: 11_000, type: 'ADDED', object: event('table-1', 'DeletedExternalResource', `Deleted Table "${NAME}" in gcp`) },
    { at: 11_100, type: 'DELETED', object: object('table-1', { 'k8or.io/create-succeeded': 'x' }) },
    { at: 21_000, type: 'MODIFIED', object: object('table-8', { 'k8or.io/create-pending': 'x' }) },
    ...(withLeaveEvent
      ? [{ at: 31_000, type: 'ADDED', object: event('table-8', 'NotOwned', `Left Table "${NAME}" in the cloud: it is not owned by this object. A cloud resource named "${NAME}" exists, and nothing proves it is this object's (this kind has no tags, no identity recorded at creation).`) }]
      : []),
    { at: 31_100, type: 'DELETED', object: object('table-8', { 'k8or.io/create-pending': 'x' }) },
  ];
  for (const watched of watch) c.onEvent(watched);
  await c.checkAfterTeardown('004', [] as ManagedObject[]);
  return c.violations.map((v) => `${v.invariant}: ${v.message}`);
}

/**
 * Twins: table-28 and table-29 name one table, admitted at once. table-28 goes first; its create's
 * outcome is never learned (the SDK retried it and was told the table exists), so it says nothing
 * proves the table its own, and leaves it at its delete. table-29 waits behind it as a duplicate and
 * never starts a create (no create marker, ever), so it cannot have made the table.
 */
async function twinLeaks(secondStartedACreate: boolean): Promise<string[]> {
  const record: HistoryRecord = { seed: 14, lines: [], others: [], objects: new Map(), bigtableInstance: new Map(), watched: [], disruptions: [] };
  record.objects.set('Table/table-28', table('table-28', 1_000));
  record.objects.set('Table/table-29', table('table-29', 1_000));
  const c = checker(record);
  const unproven = `CreateTable: table "${NAME}" already exists and the SDK retried this create, so an earlier attempt may have made it, but nothing proves it is this object's (TableAlreadyExists)`;
  const watch: Watched[] = [
    { at: 1_100, type: 'ADDED', object: object('table-29', {}) },
    { at: 1_200, type: 'MODIFIED', object: object('table-28', { 'k8or.io/create-pending': 'x' }) },
    ...(secondStartedACreate ? [{ at: 1_300, type: 'MODIFIED', object: object('table-29', { 'k8or.io/create-pending': 'x' }) }] : []),
    { at: 2_000, type: 'MODIFIED', object: { ...object('table-28', { 'k8or.io/create-pending': 'x' }), status: { conditions: [{ type: 'Synced', status: 'False', reason: 'NotOwned', message: unproven }] } } as Watched['object'] },
    { at: 11_100, type: 'DELETED', object: object('table-28', { 'k8or.io/create-pending': 'x' }) },
    { at: 11_200, type: 'DELETED', object: object('table-29', secondStartedACreate ? { 'k8or.io/create-pending': 'x' } : {}) },
  ];
  for (const watched of watch) c.onEvent(watched);
  await c.checkAfterTeardown('004', [] as ManagedObject[]);
  return c.violations.map((v) => `${v.invariant}: ${v.message}`);
}

describe('the history checker', () => {
  it('judges a table left by an unknown outcome by the objects that started a create, not a twin that never did', async () => {
    assert.deepEqual(await twinLeaks(false), []);
  });

  it('still calls it a leak when the twin started a create of its own and never said nothing proves it', async () => {
    const found = await twinLeaks(true);
    assert.equal(found.length, 1);
    assert.match(found[0]!, /^2: gcp\/Table@k8or-history h004gct1 is left with no object \(made by k8or for table-28, table-29/);
  });

  it('leaves alone a table whose only possible maker said at its delete that nothing proves it its own', async () => {
    assert.deepEqual(await leaks(true), []);
  });

  it('still calls it a leak when that object never said so', async () => {
    const found = await leaks(false);
    assert.equal(found.length, 1);
    assert.match(found[0]!, /^2: gcp\/Table@k8or-history h004gct1 is left with no object/);
  });
});

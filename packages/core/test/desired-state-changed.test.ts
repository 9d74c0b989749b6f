import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Annotations } from '@k8or/api';
import { desiredStateChanged, drainLabel, shardLabel, type ManagedObject } from '@k8or/core';

function bucket(metadata: Partial<ManagedObject['metadata']> = {}, status?: object): ManagedObject {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'Bucket',
    metadata: { name: 'photos', namespace: 'team-a', generation: 1, resourceVersion: '10', ...metadata },
    spec: { location: 'eu-west-1' },
    ...(status ? { status } : {}),
  } as ManagedObject;
}

describe('desiredStateChanged: which updates are worth a reconcile', () => {
  it("ignores the engine's own writes: status, finalizers, create markers, the external name", () => {
    const before = bucket({ annotations: { team: 'a' } });
    assert.equal(desiredStateChanged(before, bucket({ annotations: { team: 'a' }, resourceVersion: '11' }, { observedGeneration: 1 })), false);
    assert.equal(desiredStateChanged(before, bucket({ annotations: { team: 'a' }, finalizers: ['k8or.io/finalizer'] })), false);
    const marked = bucket({
      annotations: { team: 'a', [Annotations.createPending]: 't1', [Annotations.createSucceeded]: 't2', [Annotations.externalName]: 'photos-1' },
    });
    assert.equal(desiredStateChanged(before, marked), false);
    assert.equal(desiredStateChanged(marked, before), false);
    // No annotations and an empty map (or only markers) are the same desired state.
    assert.equal(desiredStateChanged(bucket(), bucket({ annotations: {}, labels: {} })), false);
    assert.equal(desiredStateChanged(bucket(), bucket({ annotations: { [Annotations.createPending]: 't1' } })), false);
    assert.equal(desiredStateChanged(bucket(), bucket({ annotations: { [Annotations.createFailed]: 't1' } })), false, 'a refused create recorded is the engine\'s own write');
  });

  it('ignores the shard and drain labels (which replica works it), and no other label', () => {
    const adopted = bucket({ labels: { team: 'a', [shardLabel('Bucket')]: 'shard-dead' } });
    assert.equal(desiredStateChanged(adopted, bucket({ labels: { team: 'a', [shardLabel('Bucket')]: 'shard-0' } })), false, 'relabelled for its adopter');
    assert.equal(desiredStateChanged(adopted, bucket({ labels: { team: 'a', [shardLabel('Bucket')]: 'shard-dead', [drainLabel('Bucket')]: 'true' } })), false, 'drained');
    assert.equal(desiredStateChanged(adopted, bucket({ labels: { team: 'a' } })), false, 'let go of');
    assert.equal(desiredStateChanged(bucket({ labels: { [shardLabel('Table')]: 'x' } }), bucket()), false);
    assert.equal(desiredStateChanged(adopted, bucket({ labels: { team: 'b', [shardLabel('Bucket')]: 'shard-dead' } })), true, 'a label of the user');
  });

  it("ignores the name the engine gave a tagless kind's object before its first create, and nothing more", () => {
    const unnamed = bucket();
    const named = { ...bucket({ generation: 2, annotations: { [Annotations.externalName]: 'photos-k8or-7a1d' } }), spec: { location: 'eu-west-1', name: 'photos-k8or-7a1d' } } as ManagedObject;
    assert.equal(desiredStateChanged(unnamed, named), false);
    // the user's own name (no marker naming it), or a name with another spec change, is desired state
    assert.equal(desiredStateChanged(unnamed, { ...named, metadata: { ...named.metadata, annotations: {} } } as ManagedObject), true);
    assert.equal(desiredStateChanged(unnamed, { ...named, spec: { location: 'us-east-1', name: 'photos-k8or-7a1d' } } as ManagedObject), true);
    // a rename of a named object is a spec change
    assert.equal(desiredStateChanged(named, { ...named, metadata: { ...named.metadata, generation: 3, annotations: { [Annotations.externalName]: 'other' } }, spec: { location: 'eu-west-1', name: 'other' } } as ManagedObject), true);
  });

  it('reconciles on a new object, a spec change, a deletion, and any change to user annotations or labels', () => {
    const before = bucket({ annotations: { team: 'a' }, labels: { env: 'prod' } });
    assert.equal(desiredStateChanged(undefined, before), true);
    assert.equal(desiredStateChanged(before, bucket({ annotations: { team: 'a' }, labels: { env: 'prod' }, generation: 2 })), true);
    assert.equal(desiredStateChanged(before, bucket({ annotations: { team: 'a' }, labels: { env: 'prod' }, deletionTimestamp: '2026-11-23T12:00:00Z' as ManagedObject['metadata']['deletionTimestamp'] })), true);
    assert.equal(desiredStateChanged(before, bucket({ annotations: { team: 'b' }, labels: { env: 'prod' } })), true);
    assert.equal(desiredStateChanged(before, bucket({ annotations: { team: 'a', [Annotations.paused]: 'true' }, labels: { env: 'prod' } })), true);
    assert.equal(desiredStateChanged(before, bucket({ labels: { env: 'prod' } })), true);
    assert.equal(desiredStateChanged(before, bucket({ annotations: { team: 'a' } })), true);
    assert.equal(desiredStateChanged(before, bucket({ annotations: { team: 'a' }, labels: { env: 'prod', tier: 'gold' } })), true);
    // The same number of entries, but not the same keys.
    assert.equal(desiredStateChanged(before, bucket({ annotations: { owner: 'a' }, labels: { env: 'prod' } })), true);
  });
});

import type { ManagedKindName } from '@k8or/api';
import type { WatchSource } from '../informer/informer.js';
import { adoptionHash } from './keys.js';
import { shardLabel } from './labels.js';
import { HashRing } from './ring.js';
import type { ShardAdoption } from './shard-leases.js';

interface Adoption {
  adopters: string;
  ring: HashRing;
  /** While this shard may work the objects: a signal that aborts when that ends, and the timer that ends it. */
  active: { lapsed: AbortController; timer: NodeJS.Timeout } | undefined;
}

/** What an object's shard is read from. */
interface Labelled {
  metadata: { namespace?: string | undefined; name?: string | undefined; labels?: Record<string, string> | undefined };
}

export interface ShardAdoptionsOptions {
  kind: ManagedKindName;
  /** This shard's name. */
  self: string;
  /** The dead shards' objects to watch beside this shard's own, from now on (one source per adopted shard). */
  onSourcesChange: (sources: WatchSource<Labelled>[]) => void;
}

/**
 * One shard's adoptions of dead shards, for one kind: which objects it works (its own, and those of
 * each dead shard it adopts that fall to it on the adopters' ring), the label selectors that watch
 * them (its own, and one beside it for each adopted shard, so listing an adopted shard's objects
 * never holds up the watch of its own), and a signal per adoption that aborts when it pauses.
 *
 * An adoption is watched while reads of the Leases grant it, and worked only until its
 * `workableUntil`: past that, without a read that saw the leader write again, it pauses (its calls
 * abort; its objects stay cached, and those that fall to this shard wait: `awaits`) and resumes
 * when a read shows a newer write.
 * The leader's record may expire once it pauses, and the dead shard hold its Lease again. An
 * adoption no read grants any more (its Lease held by another, or its record expired) leaves the
 * watch.
 */
export class ShardAdoptions {
  readonly #options: ShardAdoptionsOptions;
  readonly #adoptions = new Map<string, Adoption>();

  constructor(options: ShardAdoptionsOptions) {
    this.#options = options;
  }

  /** Whether any dead shard is adopted now (watched, paused or not). */
  get adopting(): boolean {
    return this.#adoptions.size > 0;
  }

  /** This shard's own objects. */
  get selector(): string {
    return `${shardLabel(this.#options.kind)}=${this.#options.self}`;
  }

  /** Every object of each dead shard it adopts, one source per shard, watched beside its own. */
  get sources(): WatchSource<Labelled>[] {
    const label = shardLabel(this.#options.kind);
    return [...this.#adoptions.keys()].sort().map((shard) => ({ labelSelector: `${label}=${shard}`, owns: (obj) => obj.metadata.labels?.[label] === shard }));
  }

  #watched(): string {
    return [...this.#adoptions.keys()].sort().join(',');
  }

  /** The adoptions a read of the Leases found: those naming this shard are watched (and worked until their `workableUntil`), every other is dropped. */
  set(grants: readonly ShardAdoption[], now = performance.now()): void {
    const before = this.#watched();
    const granted = new Map(grants.filter((grant) => grant.adopters.includes(this.#options.self)).map((grant) => [grant.shard, grant]));
    for (const [shard, adoption] of this.#adoptions) {
      const grant = granted.get(shard);
      if (grant && sorted(grant.adopters) === adoption.adopters) continue;
      this.#pause(adoption, shard);
      this.#adoptions.delete(shard);
    }
    for (const [shard, grant] of granted) {
      const adoption = this.#adoptions.get(shard) ?? { adopters: sorted(grant.adopters), ring: new HashRing(grant.adopters), active: undefined };
      this.#adoptions.set(shard, adoption);
      if (grant.workableUntil <= now) {
        this.#pause(adoption, shard);
        continue;
      }
      if (adoption.active) clearTimeout(adoption.active.timer);
      const timer = setTimeout(() => this.#pause(adoption, shard), grant.workableUntil - now);
      timer.unref();
      adoption.active = { lapsed: adoption.active?.lapsed ?? new AbortController(), timer };
    }
    if (this.#watched() !== before) this.#options.onSourcesChange(this.sources);
  }

  /** Whether this shard works `obj`: labelled for it, or for a dead shard it adopts now and falling to it there. */
  works(obj: Labelled): boolean {
    const shard = obj.metadata.labels?.[shardLabel(this.#options.kind)];
    if (shard === this.#options.self) return true;
    const adoption = this.#fallingHere(shard, obj);
    return adoption?.active !== undefined;
  }

  /** Whether `obj` falls to this shard under an adoption that is paused: it waits until the adoption resumes or ends. */
  awaits(obj: Labelled): boolean {
    const adoption = this.#fallingHere(obj.metadata.labels?.[shardLabel(this.#options.kind)], obj);
    return adoption !== undefined && adoption.active === undefined;
  }

  /** The adoption of `shard`, when `obj` falls to this shard under it. */
  #fallingHere(shard: string | undefined, obj: Labelled): Adoption | undefined {
    const adoption = shard === undefined || shard === this.#options.self ? undefined : this.#adoptions.get(shard);
    if (!adoption) return undefined;
    const hash = adoptionHash({ kind: this.#options.kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' });
    return adoption.ring.shardAt(hash) === this.#options.self ? adoption : undefined;
  }

  /** For an object of an adopted shard: a signal that aborts when that adoption pauses; undefined for this shard's own. */
  lapseSignal(obj: Labelled): AbortSignal | undefined {
    const shard = obj.metadata.labels?.[shardLabel(this.#options.kind)];
    return shard === undefined || shard === this.#options.self ? undefined : this.#adoptions.get(shard)?.active?.lapsed.signal;
  }

  /** Every adoption ends: the shard stops. */
  stop(): void {
    for (const [shard, adoption] of this.#adoptions) this.#pause(adoption, shard);
    this.#adoptions.clear();
  }

  #pause(adoption: Adoption, shard: string): void {
    if (!adoption.active) return;
    clearTimeout(adoption.active.timer);
    adoption.active.lapsed.abort(new Error(`the adoption of shard ${shard}'s objects lapsed`));
    adoption.active = undefined;
  }
}

function sorted(names: readonly string[]): string {
  return [...names].sort().join(',');
}

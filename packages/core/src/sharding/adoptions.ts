import type { ManagedKindName } from '@k8or/api';
import { adoptionHash } from './keys.js';
import { shardLabel } from './labels.js';
import { HashRing } from './ring.js';
import type { ShardAdoption } from './shard-leases.js';

interface Adoption {
  adopters: string;
  ring: HashRing;
  /** Aborted when the adoption lapses: the calls for its objects stop. */
  lapsed: AbortController;
  timer: NodeJS.Timeout;
}

/** What an object's shard is read from. */
interface Labelled {
  metadata: { namespace?: string | undefined; name?: string | undefined; labels?: Record<string, string> | undefined };
}

/**
 * One shard's adoptions of dead shards, for one kind: which objects it works (its own, and those of
 * each dead shard it adopts that fall to it on the adopters' ring), the label selector that watches
 * them all, and a signal per adoption that aborts when it lapses. An adoption lapses when a read of
 * the Leases stops granting it, or at its `workableUntil` when no read renewed it (the Leases cannot be
 * read): the leader's record of the dead shard may then expire, and that shard hold its Lease again.
 */
export class ShardAdoptions {
  readonly #kind: ManagedKindName;
  readonly #self: string;
  readonly #onSelectorChange: (selector: string) => void;
  readonly #adoptions = new Map<string, Adoption>();

  constructor(kind: ManagedKindName, self: string, onSelectorChange: (selector: string) => void) {
    this.#kind = kind;
    this.#self = self;
    this.#onSelectorChange = onSelectorChange;
  }

  /** This shard's own objects, and every object of the dead shards it adopts. */
  get selector(): string {
    const label = shardLabel(this.#kind);
    if (this.#adoptions.size === 0) return `${label}=${this.#self}`;
    return `${label} in (${[this.#self, ...this.#adoptions.keys()].sort().join(',')})`;
  }

  /** The adoptions a read of the Leases found: those naming this shard and not yet past `workableUntil` are kept or begun, every other lapses. */
  set(grants: readonly ShardAdoption[], now = performance.now()): void {
    const before = this.selector;
    const granted = new Map(grants.filter((grant) => grant.adopters.includes(this.#self) && grant.workableUntil > now).map((grant) => [grant.shard, grant]));
    for (const [shard, adoption] of this.#adoptions) {
      const grant = granted.get(shard);
      if (!grant || [...grant.adopters].sort().join(',') !== adoption.adopters) this.#lapse(shard);
    }
    for (const [shard, grant] of granted) {
      const adopters = [...grant.adopters].sort().join(',');
      const kept = this.#adoptions.get(shard);
      if (kept) clearTimeout(kept.timer);
      const timer = setTimeout(() => this.#lapseAndReselect(shard), grant.workableUntil - now);
      timer.unref();
      this.#adoptions.set(shard, kept ? { ...kept, timer } : { adopters, ring: new HashRing(grant.adopters), lapsed: new AbortController(), timer });
    }
    if (this.selector !== before) this.#onSelectorChange(this.selector);
  }

  /** Whether this shard works `obj`: labelled for it, or for a dead shard it adopts and falling to it there. */
  works(obj: Labelled): boolean {
    const shard = obj.metadata.labels?.[shardLabel(this.#kind)];
    if (shard === this.#self) return true;
    const adoption = shard === undefined ? undefined : this.#adoptions.get(shard);
    if (!adoption) return false;
    const hash = adoptionHash({ kind: this.#kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' });
    return adoption.ring.shardAt(hash) === this.#self;
  }

  /** For an object of an adopted shard: a signal that aborts when that adoption lapses; undefined for this shard's own. */
  lapseSignal(obj: Labelled): AbortSignal | undefined {
    const shard = obj.metadata.labels?.[shardLabel(this.#kind)];
    return shard === undefined || shard === this.#self ? undefined : this.#adoptions.get(shard)?.lapsed.signal;
  }

  /** Every adoption lapses: the shard stops. */
  stop(): void {
    for (const shard of [...this.#adoptions.keys()]) this.#lapse(shard);
  }

  #lapseAndReselect(shard: string): void {
    if (!this.#adoptions.has(shard)) return;
    this.#lapse(shard);
    this.#onSelectorChange(this.selector);
  }

  #lapse(shard: string): void {
    const adoption = this.#adoptions.get(shard);
    if (!adoption) return;
    clearTimeout(adoption.timer);
    this.#adoptions.delete(shard);
    adoption.lapsed.abort(new Error(`the adoption of shard ${shard}'s objects lapsed`));
  }
}

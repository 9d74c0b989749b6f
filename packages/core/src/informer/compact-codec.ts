import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** How a cache keeps each object: as it is (no codec), or encoded and decoded to a fresh copy on each read. */
export interface ObjectCodec<T> {
  encode(obj: T): string;
  decode(stored: string): T;
}

/** At most this many dictionaries; a cache whose objects keep growing stops learning after it. */
const MAX_DICTIONARIES = 4;
/** A sample this much longer than the newest dictionary replaces it for the objects encoded from then on. */
const GROWTH_TO_LEARN = 1.25;

/**
 * The objects' JSON, deflated against a dictionary learnt from the cache's own objects, kept as a
 * one-byte string. Objects of one kind share most of their text (keys, conditions' reasons and
 * messages, the apiVersion, the finalizer), so a dictionary made of one of them deflates a Bucket
 * to a small part of its JSON: with it the operator's whole heap per Bucket fell from 2.7 to 1.2 KiB
 * at 33,334 (docs/benchmarks.md, "The compact cache").
 *
 * The dictionary is the first object's JSON; a much longer object later (the first with a status,
 * say) becomes a newer one, and each entry's first character names the dictionary it was encoded
 * with, so older entries stay readable until they are written again.
 */
export function compactJsonCodec<T>(): ObjectCodec<T> {
  const dictionaries: Buffer[] = [];
  return {
    encode(obj: T): string {
      const text = Buffer.from(JSON.stringify(obj));
      const newest = dictionaries.at(-1);
      if (dictionaries.length < MAX_DICTIONARIES && (!newest || text.length > newest.length * GROWTH_TO_LEARN)) dictionaries.push(text);
      const index = dictionaries.length - 1;
      const deflated = deflateRawSync(text, { dictionary: dictionaries[index]! });
      // One flat string (a concatenation would keep a two-part string per entry).
      return Buffer.concat([Buffer.of(index), deflated]).toString('latin1');
    },
    decode(stored: string): T {
      const bytes = Buffer.from(stored, 'latin1');
      const dictionary = dictionaries[bytes[0]!];
      if (!dictionary) throw new Error('cache entry encoded with an unknown dictionary');
      const text = inflateRawSync(bytes.subarray(1), { dictionary });
      return JSON.parse(text.toString('utf8')) as T;
    },
  };
}

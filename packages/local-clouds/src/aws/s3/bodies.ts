import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the S3 fake keeps object bodies: each version's bytes under an id of its own. */
export interface ObjectBodies {
  /** Keeps `body` and returns its id. */
  write(body: Buffer): string;
  /** The bytes kept under `id`, or undefined when there are none. */
  read(id: string): Buffer | undefined;
  remove(id: string): void;
}

/** Bodies in memory, gone when the fake stops. */
export function memoryBodies(): ObjectBodies {
  const bodies = new Map<string, Buffer>();
  return {
    write(body) {
      const id = randomUUID();
      bodies.set(id, Buffer.from(body));
      return id;
    },
    read: (id) => bodies.get(id),
    remove: (id) => void bodies.delete(id),
  };
}

/**
 * Bodies as files, one per version, in `directory`. A body is written before the bucket state that
 * names it, so a crash leaves at most a file nobody names, never a name without its file.
 */
export function diskBodies(directory: string): ObjectBodies {
  mkdirSync(directory, { recursive: true });
  const file = (id: string): string => {
    if (!/^[0-9a-f-]{36}$/.test(id)) throw new Error(`not an object body id: ${id}`);
    return join(directory, id);
  };
  return {
    write(body) {
      const id = randomUUID();
      writeFileSync(file(id), body);
      return id;
    },
    read(id) {
      try {
        return readFileSync(file(id));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    remove: (id) => rmSync(file(id), { force: true }),
  };
}

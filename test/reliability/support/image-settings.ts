// The image's memory settings, read from the Dockerfile that builds it, so a bench or a suite that
// runs replicas "as a Pod of the chart runs them" cannot drift from what the image does.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DOCKERFILE = fileURLToPath(new URL('../../../Dockerfile', import.meta.url));

/** The flags `node` gets in the Dockerfile's ENTRYPOINT (exec form), and its `MALLOC_*` environment. */
export interface ImageSettings {
  nodeFlags: string[];
  env: Record<string, string>;
}

export function imageSettingsOf(dockerfile: string): ImageSettings {
  const entrypoint = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile);
  if (!entrypoint) throw new Error('the Dockerfile has no ENTRYPOINT in exec form (a JSON array)');
  const command: unknown = JSON.parse(entrypoint[1]!);
  if (!Array.isArray(command) || command[0] !== 'node' || !command.every((word) => typeof word === 'string')) {
    throw new Error(`the Dockerfile's ENTRYPOINT must start with "node", got ${entrypoint[1]}`);
  }
  const nodeFlags: string[] = [];
  for (const word of command.slice(1) as string[]) {
    if (!word.startsWith('--')) break;
    nodeFlags.push(word);
  }
  const env: Record<string, string> = {};
  for (const line of dockerfile.matchAll(/^ENV\s+(.+)$/gm)) {
    for (const pair of line[1]!.trim().split(/\s+/)) {
      const equals = pair.indexOf('=');
      if (equals > 0 && pair.startsWith('MALLOC_')) env[pair.slice(0, equals)] = pair.slice(equals + 1);
    }
  }
  return { nodeFlags, env };
}

export const IMAGE_SETTINGS: ImageSettings = imageSettingsOf(readFileSync(DOCKERFILE, 'utf8'));

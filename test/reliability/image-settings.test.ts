// The benches and the sharding suite run replicas with the image's memory settings, read from the
// Dockerfile: a Dockerfile they can no longer read must fail here, not silently run replicas
// without them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IMAGE_SETTINGS, imageSettingsOf } from './support/image-settings.ts';

describe('the image settings read from the Dockerfile', () => {
  it('are the flags before the script in the ENTRYPOINT and every MALLOC_ variable of its ENV lines', () => {
    const settings = imageSettingsOf([
      'FROM node:24-slim',
      'ENV NODE_ENV=production',
      'ENV MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072',
      'ENTRYPOINT ["node", "--max-semi-space-size=2", "--max-opt=2", "/app/bin.js", "--not-a-node-flag"]',
    ].join('\n'));
    assert.deepEqual(settings, { nodeFlags: ['--max-semi-space-size=2', '--max-opt=2'], env: { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' } });
  });

  it('refuse an ENTRYPOINT in shell form or one that does not run node', () => {
    assert.throws(() => imageSettingsOf('ENTRYPOINT node --max-opt=2 /app/bin.js'), /no ENTRYPOINT in exec form/);
    assert.throws(() => imageSettingsOf('ENTRYPOINT ["tini", "--", "node"]'), /must start with "node"/);
  });

  it('of the repository\'s Dockerfile include its V8 sizing and malloc arenas', () => {
    assert.ok(IMAGE_SETTINGS.nodeFlags.some((flag) => flag.startsWith('--max-semi-space-size=')), `node flags: ${IMAGE_SETTINGS.nodeFlags.join(' ')}`);
    assert.ok(IMAGE_SETTINGS.env.MALLOC_ARENA_MAX !== undefined, `malloc environment: ${JSON.stringify(IMAGE_SETTINGS.env)}`);
  });
});

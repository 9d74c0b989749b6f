/**
 * No package may hold an import circle, type-only imports included: a circle of types still ties the
 * files' layers together, and the next value import along it turns it into a load-order bug.
 * dpdm reads the TypeScript sources (its `transform` off keeps `import type` edges).
 */
import { readdirSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCircular, parseDependencyTree } from 'dpdm';

const root = join(import.meta.dirname, '..', '..');

function sourceFolders(): string[] {
  const folders: string[] = [];
  for (const parent of ['packages', 'providers']) {
    for (const name of readdirSync(join(root, parent)).sort()) {
      if (existsSync(join(root, parent, name, 'src'))) folders.push(join(parent, name, 'src'));
    }
  }
  return folders;
}

describe('import circles', () => {
  const folders = sourceFolders();

  it('finds every package and provider source folder', () => {
    assert.ok(folders.includes(join('packages', 'apiserver', 'src')), `source folders found: ${folders.join(', ')}`);
    assert.ok(folders.length >= 10, `source folders found: ${folders.join(', ')}`);
  });

  for (const folder of folders) {
    it(`${folder} has no import circle`, async () => {
      const tree = await parseDependencyTree(`${folder}/**/*.ts`, { context: root, cwd: root, transform: false, skipDynamicImports: false });
      assert.ok(Object.keys(tree).some((file) => file.startsWith(folder)), `dpdm read no file of ${folder}`);
      const circles = parseCircular(tree).map((circle) => circle.map((file) => relative(folder, file)).join(' -> '));
      assert.deepEqual(circles, [], `import circles in ${folder}:\n${circles.join('\n')}`);
    });
  }
});

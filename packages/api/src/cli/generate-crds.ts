#!/usr/bin/env node
// Writes the CRD YAML to the folder given (charts/k8or/crds/ from `npm run generate`).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { allCrds, crdFileName, crdYaml } from '../crds.js';

const outDir = resolve(process.argv[2] ?? 'charts/k8or/crds');
mkdirSync(outDir, { recursive: true });
const wanted = new Set<string>();
for (const crd of allCrds()) {
  const file = crdFileName(crd);
  wanted.add(file);
  writeFileSync(join(outDir, file), crdYaml(crd));
  console.log(`wrote ${join(outDir, file)}`);
}
for (const stale of readdirSync(outDir).filter((f) => f.endsWith('.yaml') && !wanted.has(f))) {
  rmSync(join(outDir, stale));
  console.log(`removed stale ${stale}`);
}

import type { TraceReport } from './report.js';

/** One line of the tree and the lines under it. */
interface Node {
  text: string;
  children?: Node[];
}

const leaf = (text: string): Node => ({ text });
const pairs = (map: Readonly<Record<string, string>>): string =>
  Object.entries(map)
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}=${v}`)
    .join(', ') || '(none)';
const value = (v: unknown): string => (v === undefined ? '(unset)' : JSON.stringify(v));

/** The report as a tree, as `k8or trace` prints it. */
export function renderTrace(report: TraceReport): string {
  const { object } = report;
  const title = `${object.kind} ${object.namespace ? `${object.namespace}/` : ''}${object.name}`;
  const nodes: Node[] = [];

  const objectLines: Node[] = [];
  if (object.generation !== undefined) objectLines.push(leaf(`generation ${object.generation}, observed ${object.observedGeneration ?? '(never)'}`));
  if (object.managementPolicy) objectLines.push(leaf(`managementPolicy ${object.managementPolicy}, deletionPolicy ${object.deletionPolicy ?? ''}, create ${object.creation ?? ''}`));
  for (const [k, v] of Object.entries(object.annotations)) objectLines.push(leaf(`${k}: ${v}`));
  if (object.deleting) objectLines.push(leaf(`deleting since ${object.deleting.since}, finalizers: ${object.deleting.finalizers.join(', ') || '(none)'}`));
  if (objectLines.length) nodes.push({ text: 'Object', children: objectLines });

  nodes.push({
    text: 'Conditions',
    children: report.conditions.length ? report.conditions.map((c) => leaf(`${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`)) : [leaf(object.kind === 'ProviderConfig' ? '(none)' : '(none yet: the operator has not reconciled it)')],
  });

  const pc = report.providerConfig;
  if (pc) {
    const children: Node[] = [];
    if (!pc.found) children.push(leaf('not found'));
    if (pc.provider) children.push(leaf(`provider ${pc.provider}${pc.installed ? '' : ' (not installed here)'}`));
    if (pc.target) children.push(leaf(`target now: ${pairs(pc.target)}`));
    if (pc.recordedTarget) children.push(leaf(`target at creation: ${pairs(pc.recordedTarget)}${pc.targetMatches === false ? ' (DIFFERENT)' : pc.targetMatches ? ' (same)' : ''}`));
    for (const [kind, target] of Object.entries(pc.targets ?? {})) if (target) children.push(leaf(`${kind} target: ${pairs(target)}`));
    for (const c of pc.conditions ?? []) children.push(leaf(`${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`));
    const chosen = pc.chosenBy === 'spec' ? '' : pc.chosenBy === 'namespace-annotation' ? ' (from the namespace annotation)' : ' (the cluster default)';
    nodes.push({ text: object.kind === 'ProviderConfig' ? 'Provider' : `ProviderConfig ${pc.name}${chosen}`, children });
  }

  const credentials = report.credentials;
  if (credentials) {
    const secret = credentials.secret;
    const text = secret
      ? `Secret ${secret.namespace}/${secret.name}: ${secret.found ? `found, keys ${secret.keys?.join(', ') || '(none)'} (values not shown)` : 'NOT FOUND'}`
      : `${credentials.source} (the operator's own identity)`;
    nodes.push({ text: 'Credentials', children: [leaf(text)] });
  }

  const cloud = report.cloud;
  if (cloud) {
    const children: Node[] = [];
    if (cloud.read === 'skipped') children.push(leaf(`not read: ${cloud.why ?? ''}`));
    if (cloud.read === 'failed') children.push(leaf(`read failed${cloud.errorCode ? ` (${cloud.errorCode})` : ''}: ${cloud.why ?? ''}`));
    if (cloud.read === 'done') {
      children.push(leaf(`exists: ${cloud.exists ? 'yes' : 'no'}${cloud.exists ? `, ready: ${cloud.ready ? 'yes' : 'no'}` : ''}`));
      if (cloud.exists) children.push(leaf(`owner tags: ${cloud.ownerTags ? pairs(cloud.ownerTags) : '(this kind has none)'}`));
      if (cloud.identity) {
        children.push(leaf(`identity at creation: ${cloud.identity.recorded ? pairs(cloud.identity.recorded) : '(not recorded)'}`));
        children.push(leaf(`identity found: ${cloud.identity.found ? pairs(cloud.identity.found) : '(none reported)'} (${cloud.identity.comparison})`));
      }
      else if (cloud.exists) children.push(leaf('identity: none recorded at creation, none reported by the cloud for this kind'));
      if (cloud.ownership) children.push(leaf(`whose: ${cloud.ownership.verdict}${cloud.ownership.proof ? ` (proof: ${cloud.ownership.proof})` : ''}`));
      for (const p of cloud.protection ?? []) children.push(leaf(`protection ${p.field}: ${p.enabled ? 'on' : 'off'}${p.blocksDeletion ? ', blocks deletion' : ''}`));
      for (const d of cloud.diff ?? []) children.push(leaf(`differs now: ${d.field}: cloud ${value(d.actual)}, spec ${value(d.desired)}`));
      for (const d of cloud.immutableDiff ?? []) children.push(leaf(`cannot change in place: ${d.field}: cloud ${value(d.actual)}, spec ${value(d.desired)}`));
    }
    nodes.push({ text: `Cloud resource${cloud.externalName ? ` "${cloud.externalName}"` : ''} (read live, read-only)`, children });
  }

  if (report.object.kind !== 'ProviderConfig') {
    nodes.push({ text: 'Drift (status.drift)', children: report.drift?.length ? report.drift.map((d) => leaf(`${d.field}: cloud ${value(d.actual)}, spec ${value(d.desired)}`)) : [leaf('none recorded')] });
  }
  const schedule = report.schedule;
  if (schedule) {
    const mode = schedule.mode === 'paused' ? 'paused: no checks' : schedule.mode === 'observe-only' ? 'ObserveOnly: checks report, never write' : 'checks repair drift';
    const source = schedule.source === 'annotation' ? 'from k8or.io/resync-period' : "the operator's default; its --resync-period may say otherwise";
    const children = [leaf(`every ${schedule.period} (${source}); ${mode}`)];
    if (schedule.ignoredAnnotation) children.push(leaf(`k8or.io/resync-period ${JSON.stringify(schedule.ignoredAnnotation.value)} ignored: ${schedule.ignoredAnnotation.why}`));
    nodes.push({ text: 'Resync', children });
  }

  nodes.push({ text: `Events (last ${report.events.length})`, children: report.events.length ? report.events.map((e) => leaf(`${e.last ?? ''} ${e.type} ${e.reason}${e.count > 1 ? ` (x${e.count})` : ''}: ${e.message}`.trim())) : [leaf('(none)')] });

  if (report.outputs) {
    const o = report.outputs;
    const children = !o.found ? [leaf('NOT FOUND')] : Object.keys(o.data ?? {}).length ? Object.entries(o.data ?? {}).map(([k, v]) => leaf(`${k}: ${v}`)) : [leaf('(empty)')];
    nodes.push({ text: `Outputs ConfigMap ${o.configMap}`, children });
  }

  nodes.push({ text: report.problems.length ? `Problems (${report.problems.length})` : 'Problems: none found', children: report.problems.map((p) => ({ text: `${p.what}`, children: [leaf(`to do: ${p.todo}`)] })) });

  return `${[title, ...draw(nodes, '')].join('\n')}\n`;
}

function draw(nodes: readonly Node[], indent: string): string[] {
  const lines: string[] = [];
  nodes.forEach((node, i) => {
    const last = i === nodes.length - 1;
    lines.push(`${indent}${last ? '└─ ' : '├─ '}${node.text}`);
    if (node.children?.length) lines.push(...draw(node.children, `${indent}${last ? '   ' : '│  '}`));
  });
  return lines;
}

/** startSandbox: wire TLS, store, watch, admission and controllers into one HTTPS server. */
import { randomBytes } from 'node:crypto';
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { pino } from 'pino';
import type { KubeObject, RequestLogEntry, Sandbox, SandboxOptions } from './types.js';
import { AdmissionChain, defaultServiceResolver } from './admission/chain.js';
import { CrdController } from './controllers/crds.js';
import { GarbageCollector } from './controllers/garbage-collector.js';
import { NamespaceController } from './controllers/namespaces.js';
import { SchemaCache } from './registry/schema-cache.js';
import { OpenApiDocuments } from './endpoints/discovery/openapi.js';
import { initCreateMetadata } from './registry/meta.js';
import { RBAC_GROUP } from './registry/rbac.js';
import { Authenticator, serviceAccountUsername } from './auth/authenticate.js';
import { bootstrapPolicy } from './auth/bootstrap.js';
import { grantKey, RbacAuthorizer } from './auth/rbac.js';
import { metadataOf } from './util.js';
import { prepareForCreate } from './registry/strategies.js';
import { persistedText, readSnapshot, SnapshotWriter } from './storage/persistence/snapshot.js';
import { ResourceRegistry, resourceTypeFromCrd } from './registry/registry.js';
import { CRD_KEY } from './registry/lifecycle.js';
import type { ServerContext } from './endpoints/context.js';
import { FaultInjector } from './endpoints/faults.js';
import { createHandler } from './endpoints/handler.js';
import { controllerUser, loopbackDeleter } from './endpoints/loopback.js';
import type { DeleteThroughApi } from './controllers/api.js';
import { ListSnapshots } from './storage/list-snapshots.js';
import { ObjectStore } from './storage/store.js';
import { createCertificateAuthority, createServingCertificate, type CertificateAuthority, type ServingCertificate } from './tls/certs.js';
import { renderKubeconfig } from './tls/kubeconfig.js';
import { WatchHistory } from './storage/watch/history.js';
import { WatchHub } from './storage/watch/hub.js';

const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** What every cluster starts with: the system namespaces and the `kubernetes` Service. */
function seedDefaults(store: ObjectStore): void {
  for (const name of INITIAL_NAMESPACES) {
    if (store.get('/namespaces', '', name)) continue;
    const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'kubernetes.io/metadata.name': name } } };
    prepareForCreate('/namespaces', ns);
    initCreateMetadata(ns, false);
    store.create('/namespaces', '', name, ns);
  }
  if (!store.get('/services', 'default', 'kubernetes')) {
    const svc: KubeObject = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: { type: 'ClusterIP', clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }] },
    };
    prepareForCreate('/services', svc);
    initCreateMetadata(svc, false);
    store.create('/services', 'default', 'kubernetes', svc);
  }
  const policy = bootstrapPolicy();
  for (const [key, objects] of [[`${RBAC_GROUP}/clusterroles`, policy.clusterRoles], [`${RBAC_GROUP}/clusterrolebindings`, policy.clusterRoleBindings]] as const) {
    for (const obj of objects) {
      const name = String(metadataOf(obj)['name']);
      if (store.get(key, '', name)) continue;
      initCreateMetadata(obj, false);
      store.create(key, '', name, obj);
    }
  }
}

/**
 * Key generation is most of a start's cost, so sandboxes without a data dir in one process share a CA
 * and serving certificate (each still has its own token). With a data dir the CA is kept there.
 */
const certificateCache = new Map<string, { ca: CertificateAuthority; serving: ServingCertificate }>();

function certificates(dataDir: string | undefined, host: string): { ca: CertificateAuthority; serving: ServingCertificate } {
  const hosts = { dns: ['localhost'], ips: ['127.0.0.1', '::1'] };
  if (/^[\d.]+$/.test(host) && !hosts.ips.includes(host) && host !== '0.0.0.0') hosts.ips.push(host);
  else if (!/^[\d.:]+$/.test(host) && host !== 'localhost') hosts.dns.push(host);
  if (dataDir) {
    const ca = JSON.parse(persistedText(dataDir, 'ca.json', () => JSON.stringify(createCertificateAuthority()))) as CertificateAuthority;
    return { ca, serving: createServingCertificate(ca, hosts) };
  }
  const key = JSON.stringify(hosts);
  let cached = certificateCache.get(key);
  if (!cached) {
    const ca = createCertificateAuthority();
    cached = { ca, serving: createServingCertificate(ca, hosts) };
    certificateCache.set(key, cached);
  }
  return cached;
}

/** Start an embedded Kubernetes API server over HTTPS. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? pino({ name: 'k8or-sandbox', level: options.logLevel ?? 'warn' });

  const { ca, serving } = certificates(options.dataDir, host);
  const token = persistedText(options.dataDir, 'token', () => randomBytes(24).toString('base64url')).trim();

  const store = new ObjectStore();
  const snapshot = options.dataDir ? readSnapshot(options.dataDir) : undefined;
  if (snapshot) store.load(snapshot);
  const registry = new ResourceRegistry();
  const schemas = new SchemaCache();
  const history = new WatchHistory(store.resourceVersion, options.watchHistorySize !== undefined ? { capacity: options.watchHistorySize } : {});
  const hub = new WatchHub();
  store.onEvent((event) => {
    history.append(event);
    hub.publish(event);
    if (event.type === 'DELETED' && event.resourceKey === CRD_KEY) hub.closeResource(resourceTypeFromCrd(event.object).key);
  });
  const crds = new CrdController(store, registry, schemas);
  // the controllers delete through the API, each as its own user; the API is served once ctx is built
  const api: { served?: ServerContext } = {};
  const deleteAs = (controller: string): DeleteThroughApi => {
    const user = controllerUser(controller);
    return (type, namespace, name, uid) => {
      if (!api.served) throw new Error('the API is not served yet');
      return loopbackDeleter(api.served, user)(type, namespace, name, uid);
    };
  };
  const namespaces = new NamespaceController(store, registry, deleteAs('namespace-controller'));
  const garbageCollector = new GarbageCollector(store, registry, deleteAs('generic-garbage-collector'));
  crds.resync();
  namespaces.resync();
  garbageCollector.resync();
  const writer = options.dataDir ? new SnapshotWriter(options.dataDir, store) : undefined;
  seedDefaults(store);

  const requestLog: RequestLogEntry[] | undefined = options.recordRequests ? [] : undefined;
  const listSnapshots = new ListSnapshots();
  const ctx: ServerContext = {
    registry,
    store,
    history,
    hub,
    schemas,
    admission: new AdmissionChain(store, options.serviceResolver ?? defaultServiceResolver, logger),
    logger,
    authenticator: new Authenticator(token, store),
    authorizer: new RbacAuthorizer(store),
    bookmarkIntervalMs: 5000,
    garbageCollector,
    listSnapshots,
    serverAddress: '',
    faults: new FaultInjector(options.faults),
  };
  api.served = ctx;
  const openapi = new OpenApiDocuments(registry);
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem }, createHandler({ ctx, openapi, requestLog }));
  // idle keep-alive TLS sockets cost memory; clients that open a connection per request leave many behind
  server.keepAliveTimeout = 5_000;
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', (err) => logger.debug({ err: err.message }, 'TLS handshake failed'));
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const url = `https://${urlHost}:${port}`;
  ctx.serverAddress = `${urlHost}:${port}`;
  const kubeconfig = renderKubeconfig({ server: url, caPem: ca.certPem, token });
  if (options.kubeconfigPath) {
    mkdirSync(dirname(options.kubeconfigPath), { recursive: true });
    writeFileSync(options.kubeconfigPath, kubeconfig, { mode: 0o600 });
  }
  logger.info({ url }, 'sandbox API server listening');

  let stopping: Promise<void> | undefined;
  const sandbox: Sandbox = {
    url,
    kubeconfig,
    caPem: ca.certPem,
    token,
    get requestLog(): RequestLogEntry[] {
      if (!requestLog) throw new Error('the request log is off: start the sandbox with recordRequests: true');
      return requestLog;
    },
    clearRequestLog: () => {
      if (requestLog) requestLog.length = 0;
    },
    accessOf: (namespace, serviceAccount) => {
      const username = serviceAccountUsername(namespace, serviceAccount);
      const user = { username, uid: '', groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'] };
      const record = ctx.authorizer.recordOf(username);
      const grants = ctx.authorizer.grantsOf(user).map((grant) => ({ grant, key: grantKey(grant), uses: record.used.get(grantKey(grant)) ?? 0 }));
      return { username, grants, unused: grants.filter((g) => g.uses === 0).map((g) => g.key), denied: [...record.denied] };
    },
    dropWatches: () => hub.closeAll(),
    faults: ctx.faults,
    compactHistory: () => {
      history.compact(store.resourceVersion);
      listSnapshots.clear();
    },
    stop: () => {
      stopping ??= new Promise<void>((resolve) => {
        crds.stop();
        namespaces.stop();
        garbageCollector.stop();
        hub.closeAll();
        ctx.admission.close();
        writer?.flush();
        server.close(() => resolve());
        server.closeIdleConnections();
        for (const socket of sockets) socket.destroy();
      });
      return stopping;
    },
  };
  if (options.kubeconfigPath) sandbox.kubeconfigPath = options.kubeconfigPath;
  return sandbox;
}

export { startFaultProxy, type FaultProxy, type FaultProxyOptions, type ProxiedCall, type ProxiedOutcome } from './fault-proxy.js';
export { CLOUD_DIALECTS, type CloudDialect, type CloudDialectName, type FaultAnswer, type ProxiedRequest } from './dialects.js';
export { seededRandom } from './prng.js';
export type { FaultPlan } from './fault-draws.js';
export { startGrpcCountingProxy, type GrpcArrival, type GrpcCountingProxy } from './grpc-counting-proxy.js';
export { GrpcStatus, startGrpcFaultProxy, tableOfRequest, type GrpcFaultProxy, type GrpcFaultProxyOptions, type GrpcProxiedCall } from './grpc-fault-proxy.js';

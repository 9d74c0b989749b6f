export { startGcsFake, type GcsFake, type GcsFakeOptions, type GcsRequestRecord, type GcsServiceAccount } from './server.js';

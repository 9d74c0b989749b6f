export { startGcsFake, type GcsFake, type GcsFakeOptions, type GcsRequestRecord, type GcsServiceAccount } from './gcs/index.js';
export { startBigtableEmulator, findCbtemulator, CBTEMULATOR_ENV, type BigtableEmulator, type BigtableEmulatorOptions } from './bigtable-emulator.js';

import { createRequire } from 'node:module';
import type * as DataTables from '@azure/data-tables';
import type * as Identity from '@azure/identity';
import type * as StorageBlob from '@azure/storage-blob';

// The Azure SDKs, loaded as CommonJS. Their ES module builds import node:http as an ES module,
// which reads its lazy WebSocket export and so loads node's own copy of undici: about 4 MiB
// resident in the operator, used by nothing. Every value this package takes from them comes from
// here, so all of it is one copy of each SDK (an error or policy made here is the SDK's own).
const require = createRequire(import.meta.url);

export const dataTables = require('@azure/data-tables') as typeof DataTables;
export const identity = require('@azure/identity') as typeof Identity;
export const storageBlob = require('@azure/storage-blob') as typeof StorageBlob;

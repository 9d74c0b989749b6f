export { spawnOwnedChild, OwnedChildSpawnError, type OwnedChild, type OwnedChildExit, type OwnedChildOptions } from './owned-child.js';
export { freePort } from './free-port.js';

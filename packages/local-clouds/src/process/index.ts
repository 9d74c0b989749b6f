export { spawnOwnedChild, OwnedChildSpawnError, type OwnedChild, type OwnedChildExit, type OwnedChildOptions } from './owned-child.js';
export { ephemeralPortsFrom, freePort, isFree } from './free-port.js';

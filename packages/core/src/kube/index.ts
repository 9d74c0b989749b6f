export * from './rest.js';
export * from './paths.js';
export * from './resources.js';
export * from './crds.js';
export * from './access.js';
export * from './kubeconfig.js';

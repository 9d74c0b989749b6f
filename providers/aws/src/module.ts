import { providerModule } from '@k8or/core';
import { awsProvider } from './plugin.js';

/**
 * The inversify ContainerModule the operator loads: binds the AWS provider plugin. Also the
 * package's `./module` export, which the operator imports instead of the package root: the root
 * re-exports the SDK-bound modules, this entry leaves them to load with the first resource.
 */
export default providerModule(awsProvider);

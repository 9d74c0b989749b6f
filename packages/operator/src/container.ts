/**
 * Service identifiers the manager binds next to the providers' ContainerModules,
 * so a provider module can depend on the operator's configuration, logger or
 * cluster connection. `Symbol.for` keeps them equal across package copies.
 */
export const OPERATOR_CONFIG = Symbol.for('k8or.io/OperatorConfig');
export const OPERATOR_LOGGER = Symbol.for('k8or.io/Logger');
export const KUBE_CONFIG = Symbol.for('k8or.io/KubeConfig');

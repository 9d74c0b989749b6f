export { startLocalStack, localStackLogger, type AwsSandboxCredentials, type LocalStack, type LocalStackEndpoints, type LocalStackOptions } from './local-stack.js';
export { SandboxPorts, SANDBOX_BACKENDS, PORTS_FILE, type SandboxBackend, type PortTaken } from './sandbox-ports.js';

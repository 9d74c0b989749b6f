import type { OperatorConfig } from './config/settings.js';
import { startManager, type Manager, type StartManagerOptions } from './manager.js';

/**
 * Runs the manager as a process's main job: starts it, prints one ready line
 * (JSON, on stdout, for scripts and tests), then waits for SIGTERM or SIGINT
 * and drains. Resolves the exit code: 0 drained, 1 the deadline passed first.
 */
export async function runManagerUntilSignalled(config: OperatorConfig, options: StartManagerOptions = {}, onReady?: (manager: Manager) => void): Promise<number> {
  const manager = await startManager(config, options);
  onReady?.(manager);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  process.stderr.write(`k8or: ${signal}: draining (up to ${Math.round(config.shutdownTimeoutMs / 1000)} s)\n`);
  const drained = await manager.stop();
  process.stderr.write(drained ? 'k8or: stopped\n' : 'k8or: the shutdown deadline passed before everything stopped\n');
  return drained ? 0 : 1;
}

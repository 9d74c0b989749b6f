import { ConfigError, resolveConfig, runManagerUntilSignalled, settingsFor, type Component, type Setting } from '@k8or/operator';
import { Option, type Command } from 'commander';

/** Adds one commander option per operator setting, with its variable and default in the help. */
export function addSettingOptions(command: Command, settings: readonly Setting[]): Command {
  for (const setting of settings) {
    const isBoolean = setting.valueName === undefined;
    const flags = isBoolean ? `--${setting.flag} [BOOL]` : `--${setting.flag} <${setting.valueName}>`;
    const defaultText = setting.default === undefined || setting.default === '' ? '' : `; default ${setting.default}`;
    command.addOption(new Option(flags, `${setting.description} [env ${setting.env}${defaultText}]`));
  }
  return command;
}

/**
 * `k8or operator` and `k8or webhook`: the manager from @k8or/operator with the
 * components asked for, until SIGTERM. Exit 2 for a setting that breaks its
 * rule, 1 when it cannot start (a provider not installed) or cannot drain in time.
 */
export async function runComponents(name: string, options: Record<string, string | boolean | undefined>, components: Component[]): Promise<number> {
  // commander names option values in camelCase; the settings go by their flags.
  const flags = Object.fromEntries(Object.entries(options).map(([key, value]) => [key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), value]));
  let config;
  try {
    config = resolveConfig(flags, process.env, components);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`k8or ${name}: ${error.message}\n`);
    return 2;
  }
  try {
    return await runManagerUntilSignalled(config);
  } catch (error) {
    process.stderr.write(`k8or ${name}: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

export const operatorSettings = (): Setting[] => settingsFor('controllers');
export const webhookSettings = (): Setting[] => settingsFor('webhook');

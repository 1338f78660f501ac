/**
 * The user's settings of the plugin (`schema/plugin.json`): a leaf module,
 * so that the commands and the views read them without importing each other.
 *
 * @packageDocumentation
 */

import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

/**
 * The user's settings of the plugin (`schema/plugin.json`).
 */
export interface IPluginSettings {
  /**
   * Seconds between two refreshes of the job list.
   */
  refreshInterval: number;

  /**
   * Whether to notify when a job submitted from this page succeeds or fails.
   */
  notifications: boolean;

  /**
   * Default `/dev/shm` size of new jobs; empty for the server's, `off` for none.
   */
  defaultShm: string;

  /**
   * Default image of new jobs; empty for the server's.
   */
  defaultImage: string;

  /**
   * Seconds between two reloads of a visible TensorBoard tab's data; 0 for
   * TensorBoard's own reloading only (every 30 s at most).
   */
  tensorBoardRefreshInterval: number;
}

/**
 * The settings' defaults, as in `schema/plugin.json`.
 */
export const DEFAULT_SETTINGS: IPluginSettings = {
  refreshInterval: 5,
  notifications: true,
  defaultShm: '',
  defaultImage: '',
  tensorBoardRefreshInterval: 10
};

/**
 * The settings from the composite (user over default) settings: a missing
 * value is the default, the others take the default's type.
 */
export function readSettings(
  composite: ReadonlyPartialJSONObject
): IPluginSettings {
  const settings = { ...DEFAULT_SETTINGS };
  for (const key of Object.keys(DEFAULT_SETTINGS) as Array<
    keyof IPluginSettings
  >) {
    const value = composite[key];
    if (value !== undefined && value !== null) {
      Private.assign(settings, key, value);
    }
  }
  return settings;
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * Set one setting from a JSON value, as the type of its default.
   */
  export function assign<K extends keyof IPluginSettings>(
    settings: IPluginSettings,
    key: K,
    value: unknown
  ): void {
    const fallback = DEFAULT_SETTINGS[key];
    settings[key] = (
      typeof fallback === 'number'
        ? Number(value)
        : typeof fallback === 'boolean'
          ? Boolean(value)
          : String(value)
    ) as IPluginSettings[K];
  }
}

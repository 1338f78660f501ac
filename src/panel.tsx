/**
 * The "PyTorch Jobs" side panel.
 *
 * @packageDocumentation
 */

import { ServerConnection } from '@jupyterlab/services';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { ReactWidget, refreshIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import { pytorchIcon } from './icons';
import { PyTorchJobAPIError, requestAPI } from './request';
import { IConfig } from './tokens';

/**
 * The side panel listing PyTorch jobs.
 *
 * For now it shows which backend the server uses, which proves that the
 * frontend reaches the server extension.
 */
export class JobsPanel extends ReactWidget {
  /**
   * Construct a panel; call `refresh()` to load the server's configuration.
   */
  constructor(options: JobsPanel.IOptions = {}) {
    super();
    this._trans = (options.translator ?? nullTranslator).load(
      'jupyter_pytorchjob'
    );
    const serverSettings = options.serverSettings;
    this._fetchConfig =
      options.fetchConfig ??
      (() => requestAPI<IConfig>('config', {}, serverSettings));
    this.id = JobsPanel.ID;
    this.addClass('jp-PyTorchJobPanel');
    this.title.icon = pytorchIcon;
    this.title.caption = this._trans.__('PyTorch Jobs');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', this._trans.__('PyTorch Jobs'));
  }

  /**
   * What the panel currently shows.
   */
  get state(): JobsPanel.State {
    return this._state;
  }

  /**
   * The user's settings of the plugin.
   */
  get settings(): JobsPanel.ISettings {
    return this._settings;
  }

  /**
   * Apply the user's settings of the plugin.
   */
  setSettings(settings: JobsPanel.ISettings): void {
    this._settings = { ...settings };
    this.update();
  }

  /**
   * Reload the server's configuration and re-render.
   *
   * Never rejects: a failure is shown in the panel.
   */
  async refresh(): Promise<void> {
    this._state = { kind: 'loading' };
    this.update();
    try {
      const config = await this._fetchConfig();
      this._state = { kind: 'ready', config };
    } catch (error) {
      this._state = { kind: 'error', error: Private.toAPIError(error) };
    }
    this.update();
  }

  protected render(): JSX.Element {
    const trans = this._trans;
    const state = this._state;
    return (
      <div className="jp-PyTorchJobPanel-content">
        <header className="jp-PyTorchJobPanel-header">
          <h2 className="jp-PyTorchJobPanel-title">
            {trans.__('PyTorch Jobs')}
          </h2>
          <button
            type="button"
            className="jp-PyTorchJobPanel-refresh jp-mod-styled"
            title={trans.__('Refresh')}
            aria-label={trans.__('Refresh')}
            disabled={state.kind === 'loading'}
            onClick={() => void this.refresh()}
          >
            <refreshIcon.react tag="span" elementSize="normal" />
          </button>
        </header>
        {state.kind === 'error' ? (
          <p className="jp-PyTorchJobPanel-error" role="alert">
            {formatError(state.error, trans)}
          </p>
        ) : (
          <ul
            className="jp-PyTorchJobPanel-status"
            role="status"
            aria-live="polite"
            aria-label={trans.__('Server status')}
            aria-busy={state.kind === 'loading'}
          >
            {state.kind === 'ready' ? (
              formatStatus(state.config, trans).map(line => (
                <li key={line}>{line}</li>
              ))
            ) : (
              <li>{trans.__('Loading…')}</li>
            )}
          </ul>
        )}
      </div>
    );
  }

  private _trans: TranslationBundle;
  private _fetchConfig: () => Promise<IConfig>;
  private _state: JobsPanel.State = { kind: 'loading' };
  private _settings: JobsPanel.ISettings = { ...JobsPanel.DEFAULT_SETTINGS };
}

/**
 * A namespace for `JobsPanel` statics.
 */
export namespace JobsPanel {
  /**
   * The DOM id of the panel, also its key in the layout restorer.
   */
  export const ID = 'jp-pytorchjob-panel';

  /**
   * The options of the panel.
   */
  export interface IOptions {
    /**
     * The application's translator; defaults to English.
     */
    translator?: ITranslator;

    /**
     * The server connection settings; defaults to the page's.
     */
    serverSettings?: ServerConnection.ISettings;

    /**
     * Load the server's configuration; defaults to `GET pytorchjob/api/config`.
     */
    fetchConfig?: () => Promise<IConfig>;
  }

  /**
   * The settings of the plugin (`schema/plugin.json`).
   */
  export interface ISettings {
    /**
     * Seconds between two refreshes of the job list.
     */
    refreshInterval: number;

    /**
     * Whether to notify when a job changes state.
     */
    notifications: boolean;

    /**
     * Default size of `/dev/shm` for new jobs, as a Kubernetes quantity.
     */
    defaultShm: string;
  }

  /**
   * The settings' defaults, as in `schema/plugin.json`.
   */
  export const DEFAULT_SETTINGS: ISettings = {
    refreshInterval: 5,
    notifications: true,
    defaultShm: '2Gi'
  };

  /**
   * What the panel shows: loading, the server's configuration, or an error.
   */
  export type State =
    | { kind: 'loading' }
    | { kind: 'ready'; config: IConfig }
    | { kind: 'error'; error: PyTorchJobAPIError };
}

/**
 * The status lines shown for a server configuration.
 *
 * @param config - The answer of `GET pytorchjob/api/config`.
 * @param trans - The translation bundle of the `jupyter_pytorchjob` domain.
 * @returns One line per fact, backend first.
 */
export function formatStatus(
  config: IConfig,
  trans: TranslationBundle
): string[] {
  const lines = [
    trans.__('Backend: %1', config.backend),
    trans.__('Version: %1', config.version)
  ];
  if (config.defaults.image) {
    lines.push(trans.__('Default image: %1', config.defaults.image));
  }
  return lines;
}

/**
 * The line shown when the server's configuration cannot be loaded.
 *
 * @param error - The failure.
 * @param trans - The translation bundle of the `jupyter_pytorchjob` domain.
 */
export function formatError(
  error: PyTorchJobAPIError,
  trans: TranslationBundle
): string {
  if (error.status === 0) {
    return trans.__('Cannot reach the Jupyter server: %1', error.message);
  }
  if (error.status === 404) {
    return trans.__(
      'The jupyter_pytorchjob server extension is not enabled (HTTP 404).'
    );
  }
  return trans.__('Server error (HTTP %1): %2', error.status, error.message);
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * Wrap any thrown value into a `PyTorchJobAPIError`.
   */
  export function toAPIError(error: unknown): PyTorchJobAPIError {
    if (error instanceof PyTorchJobAPIError) {
      return error;
    }
    return new PyTorchJobAPIError(
      0,
      error instanceof Error ? error.message : String(error)
    );
  }
}

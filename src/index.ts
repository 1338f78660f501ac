/**
 * The JupyterLab plugin of jupyter-pytorchjob.
 *
 * @packageDocumentation
 */

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator } from '@jupyterlab/translation';

import { pytorchIcon } from './icons';
import { JobsPanel } from './panel';

export { formatError, formatStatus, JobsPanel } from './panel';
export { errorFromBody, PyTorchJobAPIError, requestAPI } from './request';
export * from './tokens';

/**
 * The command IDs of the extension.
 */
export namespace CommandIDs {
  /**
   * Reveal the "PyTorch Jobs" side panel.
   */
  export const openPanel = 'pytorchjob:open-panel';
}

/**
 * The left side panel, its command and its settings.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-pytorchjob:plugin',
  description:
    'Submit, watch and TensorBoard Kubeflow PyTorchJobs from JupyterLab.',
  autoStart: true,
  requires: [ITranslator],
  optional: [ILayoutRestorer, ICommandPalette, ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    translator: ITranslator,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null
  ): void => {
    const trans = translator.load('jupyter_pytorchjob');

    const panel = new JobsPanel({
      translator,
      serverSettings: app.serviceManager.serverSettings
    });
    app.shell.add(panel, 'left', { rank: 600 });
    if (restorer) {
      restorer.add(panel, JobsPanel.ID);
    }
    void panel.refresh();

    app.commands.addCommand(CommandIDs.openPanel, {
      label: trans.__('Open PyTorch Jobs panel'),
      caption: trans.__('Show the PyTorch Jobs side panel'),
      icon: args => (args['isPalette'] ? undefined : pytorchIcon),
      describedBy: { args: { type: 'object', properties: {} } },
      execute: () => {
        app.shell.activateById(panel.id);
      }
    });
    if (palette) {
      palette.addItem({
        command: CommandIDs.openPanel,
        category: trans.__('PyTorch Jobs')
      });
    }

    if (settingRegistry) {
      settingRegistry
        .load(plugin.id)
        .then(settings => {
          panel.setSettings(Private.readSettings(settings));
          settings.changed.connect(() => {
            panel.setSettings(Private.readSettings(settings));
          });
        })
        .catch(reason => {
          console.error(
            'jupyter-pytorchjob: failed to load the settings.',
            reason
          );
        });
    }
  }
};

export default plugin;

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * The panel's settings from the composite (user over default) settings.
   */
  export function readSettings(
    settings: ISettingRegistry.ISettings
  ): JobsPanel.ISettings {
    const defaults = JobsPanel.DEFAULT_SETTINGS;
    const composite = settings.composite;
    return {
      refreshInterval: Number(
        composite['refreshInterval'] ?? defaults.refreshInterval
      ),
      notifications: Boolean(
        composite['notifications'] ?? defaults.notifications
      ),
      defaultShm: String(composite['defaultShm'] ?? defaults.defaultShm)
    };
  }
}

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
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ILauncher } from '@jupyterlab/launcher';
import { IRunningSessionManagers } from '@jupyterlab/running';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator } from '@jupyterlab/translation';

import { PyTorchJobClient } from './api';
import {
  addCommands,
  CommandIDs,
  DEFAULT_SETTINGS,
  IPluginSettings
} from './commands';
import { JobsModel } from './model';
import { JobsPanel } from './panel';
import { TensorBoardsModel } from './tensorboard/model';
import { addRunningTensorBoards } from './tensorboard/running';
import { targetKey } from './tensorboard/view';
import { IConfig } from './tokens';

export { PyTorchJobClient } from './api';
export {
  bodyForFile,
  CommandIDs,
  DEFAULT_SETTINGS,
  formDefaults,
  IPluginSettings
} from './commands';
export * from './format';
export { JobFormModel } from './form/model';
export * from './form/state';
export { LogBuffer } from './logs/buffer';
export { LogLines } from './logs/lines';
export { LogStream } from './logs/stream';
export { LogViewer } from './logs/viewer';
export { JobsModel } from './model';
export { PolledList } from './polled';
export { JobsPanel } from './panel';
export * from './tensorboard/frame';
export { TensorBoardsModel } from './tensorboard/model';
export {
  TensorBoardTarget,
  TensorBoardView,
  targetKey
} from './tensorboard/view';
export { errorFromBody, PyTorchJobAPIError, requestAPI } from './request';
export * from './tokens';

/**
 * The plugin id, also the settings id.
 */
const PLUGIN_ID = 'jupyter-pytorchjob:plugin';

/**
 * The side panel, the job form, job view and log viewer, and their commands.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'Submit, watch and TensorBoard Kubeflow PyTorchJobs from JupyterLab.',
  autoStart: true,
  requires: [ITranslator],
  optional: [
    ILayoutRestorer,
    ICommandPalette,
    ISettingRegistry,
    ILauncher,
    IDefaultFileBrowser,
    IDocumentManager,
    IRunningSessionManagers
  ],
  activate: (
    app: JupyterFrontEnd,
    translator: ITranslator,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    launcher: ILauncher | null,
    fileBrowser: IDefaultFileBrowser | null,
    docManager: IDocumentManager | null,
    runningManagers: IRunningSessionManagers | null
  ): void => {
    const trans = translator.load('jupyter_pytorchjob');
    const client = new PyTorchJobClient(app.serviceManager.serverSettings);
    let settings: IPluginSettings = { ...DEFAULT_SETTINGS };
    const model = new JobsModel({
      fetchJobs: () => client.listJobs(),
      refreshInterval: settings.refreshInterval
    });

    const tensorboards = new TensorBoardsModel({
      list: () => client.listTensorBoards(),
      stop: id => client.stopTensorBoard(id),
      refreshInterval: settings.refreshInterval
    });

    const panel = new JobsPanel({
      model,
      commands: app.commands,
      trans,
      tensorboards
    });
    app.shell.add(panel, 'left', { rank: 600 });
    if (restorer) {
      restorer.add(panel, JobsPanel.ID);
    }

    let configPromise: Promise<IConfig> | null = null;
    const config = (): Promise<IConfig> => {
      if (!configPromise) {
        configPromise = client.getConfig().catch(reason => {
          configPromise = null;
          throw reason;
        });
      }
      return configPromise;
    };
    config()
      .then(value => {
        panel.config = value;
      })
      .catch(() => {
        // The panel shows the list's own error.
      });

    const trackers = addCommands({
      app,
      client,
      model,
      trans,
      settings: () => settings,
      config,
      fileBrowser,
      docManager,
      translator,
      tensorboards,
      panelId: panel.id
    });

    if (restorer) {
      void restorer.restore(trackers.jobs, {
        command: CommandIDs.openJob,
        args: widget => ({ name: widget.content.jobName }),
        name: widget => widget.content.jobName
      });
      void restorer.restore(trackers.logs, {
        command: CommandIDs.openLogs,
        args: widget => ({ name: widget.content.jobName }),
        name: widget => widget.content.jobName
      });
      void restorer.restore(trackers.tensorboards, {
        command: CommandIDs.openTensorBoard,
        args: widget =>
          'job' in widget.target
            ? { name: widget.target.job }
            : { logdir: widget.target.logdir },
        name: widget => targetKey(widget.target)
      });
    }

    if (runningManagers) {
      addRunningTensorBoards(
        runningManagers,
        tensorboards,
        app.commands,
        trans
      );
    }

    if (palette) {
      const category = trans.__('PyTorch Jobs');
      for (const command of [
        CommandIDs.openPanel,
        CommandIDs.newJob,
        CommandIDs.openTensorBoard,
        CommandIDs.refresh
      ]) {
        palette.addItem({ command, category });
      }
    }

    if (launcher) {
      launcher.add({
        command: CommandIDs.newJob,
        category: trans.__('PyTorch Jobs'),
        rank: 1
      });
    }

    app.contextMenu.addItem({
      command: CommandIDs.runFile,
      selector: '.jp-DirListing-item[data-file-type="python"]',
      rank: 20
    });
    app.contextMenu.addItem({
      command: CommandIDs.openTensorBoardHere,
      selector: '.jp-DirListing-item[data-isdir="true"]',
      rank: 20
    });

    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(loaded => {
          const apply = () => {
            settings = Private.readSettings(loaded);
            model.refreshInterval = settings.refreshInterval;
            tensorboards.refreshInterval = settings.refreshInterval;
            trackers.tensorboards.forEach(widget => {
              widget.refreshInterval = settings.tensorBoardRefreshInterval;
            });
          };
          apply();
          loaded.changed.connect(apply);
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
   * The settings from the composite (user over default) settings.
   */
  export function readSettings(
    settings: ISettingRegistry.ISettings
  ): IPluginSettings {
    const composite = settings.composite;
    return {
      refreshInterval: Number(
        composite['refreshInterval'] ?? DEFAULT_SETTINGS.refreshInterval
      ),
      notifications: Boolean(
        composite['notifications'] ?? DEFAULT_SETTINGS.notifications
      ),
      defaultShm: String(
        composite['defaultShm'] ?? DEFAULT_SETTINGS.defaultShm
      ),
      defaultImage: String(
        composite['defaultImage'] ?? DEFAULT_SETTINGS.defaultImage
      ),
      tensorBoardRefreshInterval: Number(
        composite['tensorBoardRefreshInterval'] ??
          DEFAULT_SETTINGS.tensorBoardRefreshInterval
      )
    };
  }
}

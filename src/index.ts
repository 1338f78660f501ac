/**
 * The JupyterLab plugin of jupyter-pytorchjob.
 *
 * @packageDocumentation
 */

import { IEditorServices } from '@jupyterlab/codeeditor';
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
import { ITranslator, TranslationBundle } from '@jupyterlab/translation';

import { PyTorchJobClient } from './api';
import { CommandIDs } from './commandids';
// The commands are registered at activation: the palette, the launcher and
// the layout restorer need them at once. (`/index`: a lib/commands.js left by
// a build from before the split would win over the folder.)
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { addCommands, ITrackers } from './commands/index';
import { JobsModel } from './model';
import { JobsPanel } from './panel';
import { DEFAULT_SETTINGS, IPluginSettings, readSettings } from './settings';
import { TensorBoardsModel } from './tensorboard/model';
import { addRunningTensorBoards } from './tensorboard/running';
import { targetKey } from './tensorboard/view';
import { IConfig } from './tokens';

export { PyTorchJobClient } from './api';
export { CommandIDs } from './commandids';
export * from './format';
export { bodyForFile, formDefaults } from './form/defaults';
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
export { DEFAULT_SETTINGS, IPluginSettings, readSettings } from './settings';
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
    IRunningSessionManagers,
    IEditorServices
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
    runningManagers: IRunningSessionManagers | null,
    editorServices: IEditorServices | null
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

    const config = Private.configOnce(client);
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
      editorServices,
      translator,
      tensorboards,
      panelId: panel.id
    });

    if (restorer) {
      Private.restoreTabs(restorer, trackers);
    }

    if (runningManagers) {
      addRunningTensorBoards(
        runningManagers,
        tensorboards,
        app.commands,
        trans
      );
    }

    Private.addEntryPoints(app, trans, palette, launcher);

    if (settingRegistry) {
      Private.followSettings(settingRegistry, loaded => {
        settings = loaded;
        model.refreshInterval = settings.refreshInterval;
        tensorboards.refreshInterval = settings.refreshInterval;
        trackers.tensorboards.forEach(widget => {
          widget.refreshInterval = settings.tensorBoardRefreshInterval;
        });
      });
    }
  }
};

export default plugin;

/**
 * Module-private helpers of the activation.
 */
namespace Private {
  /**
   * The server's configuration, asked for once (again after a failure).
   */
  export function configOnce(client: PyTorchJobClient): () => Promise<IConfig> {
    let configPromise: Promise<IConfig> | null = null;
    return () => {
      if (!configPromise) {
        configPromise = client.getConfig().catch(reason => {
          configPromise = null;
          throw reason;
        });
      }
      return configPromise;
    };
  }

  /**
   * Re-open the job, log and TensorBoard tabs of the last session.
   */
  export function restoreTabs(
    restorer: ILayoutRestorer,
    trackers: ITrackers
  ): void {
    void restorer.restore(trackers.jobs, {
      command: CommandIDs.openJob,
      args: widget => ({ name: widget.content.jobName }),
      name: widget => widget.content.jobName
    });
    void restorer.restore(trackers.logs, {
      command: CommandIDs.openLogs,
      args: widget => ({
        name: widget.content.jobName,
        ...widget.content.viewOptions
      }),
      name: widget => widget.content.jobName
    });
    void restorer.restore(trackers.tensorboards, {
      command: CommandIDs.openTensorBoard,
      args: widget => ({
        ...('job' in widget.target
          ? { name: widget.target.job }
          : 'jobs' in widget.target
            ? { names: widget.target.jobs }
            : { logdir: widget.target.logdir }),
        // A failed tab comes back failed, with Retry: no start, no toast.
        ...(widget.failure !== null ? { failure: widget.failure } : {})
      }),
      name: widget => targetKey(widget.target)
    });
    void restorer.restore(trackers.comparisons, {
      command: CommandIDs.compareJobs,
      args: widget => ({ names: [...widget.content.names] }),
      name: widget => widget.content.names.join(',')
    });
  }

  /**
   * Put the commands in the palette, the launcher and the file browser's
   * context menu.
   */
  export function addEntryPoints(
    app: JupyterFrontEnd,
    trans: TranslationBundle,
    palette: ICommandPalette | null,
    launcher: ILauncher | null
  ): void {
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
  }

  /**
   * Call back with the settings now and on every change.
   */
  export function followSettings(
    registry: ISettingRegistry,
    apply: (settings: IPluginSettings) => void
  ): void {
    registry
      .load(PLUGIN_ID)
      .then(loaded => {
        const read = () => apply(readSettings(loaded.composite));
        read();
        loaded.changed.connect(read);
      })
      .catch(reason => {
        console.error(
          'jupyter-pytorchjob: failed to load the settings.',
          reason
        );
      });
  }
}

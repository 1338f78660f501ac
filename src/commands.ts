/**
 * Every command of the extension, in one place.
 *
 * @packageDocumentation
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import {
  Dialog,
  MainAreaWidget,
  Notification,
  showDialog,
  WidgetTracker
} from '@jupyterlab/apputils';
import { PageConfig, PathExt } from '@jupyterlab/coreutils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { FileDialog, IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ITranslator, TranslationBundle } from '@jupyterlab/translation';
import { ReadonlyPartialJSONObject, UUID } from '@lumino/coreutils';

import { PyTorchJobClient } from './api';
import { JobForm } from './form/form';
import { JobFormModel } from './form/model';
import { IFormDefaults } from './form/state';
import { formatError } from './format';
import { pytorchIcon } from './icons';
import { JobView } from './jobview';
import { LogViewer } from './logs/viewer';
import { JobsModel } from './model';
import { TensorBoardsModel } from './tensorboard/model';
import {
  TensorBoardTarget,
  TensorBoardView,
  targetKey
} from './tensorboard/view';
import { IConfig, IJob, IJobBody, ITensorBoard } from './tokens';

/**
 * The command IDs of the extension.
 */
export namespace CommandIDs {
  /**
   * Reveal the "PyTorch Jobs" side panel.
   */
  export const openPanel = 'pytorchjob:open-panel';

  /**
   * Open the job form (args: `command`, `workdir`, `spec`).
   */
  export const newJob = 'pytorchjob:new-job';

  /**
   * Open the job form for the `.py` file selected in the file browser.
   */
  export const runFile = 'pytorchjob:run-file';

  /**
   * Open a job's view (args: `name`).
   */
  export const openJob = 'pytorchjob:open-job';

  /**
   * Open a job's logs (args: `name`, `replica`).
   */
  export const openLogs = 'pytorchjob:open-logs';

  /**
   * Delete a job after confirmation (args: `name`).
   */
  export const deleteJob = 'pytorchjob:delete-job';

  /**
   * Open the form pre-filled with a job (args: `name`).
   */
  export const cloneJob = 'pytorchjob:clone-job';

  /**
   * Open TensorBoard in a tab (args: `name`, a job, or `logdir`, a directory
   * relative to the server root or absolute; neither: pick a directory).
   */
  export const openTensorBoard = 'pytorchjob:open-tensorboard';

  /**
   * Open TensorBoard on the directory selected in the file browser.
   */
  export const openTensorBoardHere = 'pytorchjob:open-tensorboard-here';

  /**
   * Stop a running TensorBoard and close its tabs (args: `id`).
   */
  export const stopTensorBoard = 'pytorchjob:stop-tensorboard';

  /**
   * Refresh the job list.
   */
  export const refresh = 'pytorchjob:refresh';
}

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
 * What the commands work with.
 */
export interface ICommandContext {
  /**
   * The application.
   */
  app: JupyterFrontEnd;

  /**
   * The REST client.
   */
  client: PyTorchJobClient;

  /**
   * The job list.
   */
  model: JobsModel;

  /**
   * The translation bundle of the `jupyter_pytorchjob` domain.
   */
  trans: TranslationBundle;

  /**
   * The current settings.
   */
  settings: () => IPluginSettings;

  /**
   * The server's configuration (loaded once).
   */
  config: () => Promise<IConfig>;

  /**
   * The default file browser, for *Run as PyTorchJob…*.
   */
  fileBrowser: IDefaultFileBrowser | null;

  /**
   * The document manager, for the directory picker of *Open TensorBoard…*.
   */
  docManager: IDocumentManager | null;

  /**
   * The application's translator (for JupyterLab's own dialogs).
   */
  translator?: ITranslator;

  /**
   * The running TensorBoards.
   */
  tensorboards: TensorBoardsModel;

  /**
   * The id of the side panel.
   */
  panelId: string;
}

/**
 * The trackers of the main-area widgets.
 */
export interface ITrackers {
  /**
   * Job views.
   */
  jobs: WidgetTracker<MainAreaWidget<JobView>>;

  /**
   * Log viewers.
   */
  logs: WidgetTracker<MainAreaWidget<LogViewer>>;

  /**
   * TensorBoard tabs.
   */
  tensorboards: WidgetTracker<TensorBoardView>;
}

/**
 * The form defaults from the server's configuration and the user's settings.
 */
export function formDefaults(
  config: IConfig,
  settings: IPluginSettings
): IFormDefaults {
  const shmSetting = settings.defaultShm.trim();
  const shm =
    shmSetting === ''
      ? config.defaults.shm
      : shmSetting === '0' || shmSetting.toLowerCase() === 'off'
        ? ''
        : shmSetting;
  return {
    image: settings.defaultImage.trim() || config.defaults.image,
    shm: shm ?? '',
    gpuResource: config.defaults.gpuResource,
    pvc: config.defaults.pvc ?? [],
    workdir: config.defaults.workdir ?? null
  };
}

/**
 * The job body that runs a Python file of the server's contents.
 *
 * @param path - The file, relative to the server root (`dir/train.py`).
 * @param root - The server root's absolute path, if known.
 */
export function bodyForFile(path: string, root: string | null): IJobBody {
  const dir = PathExt.dirname(path);
  const base = PathExt.basename(path);
  if (root && root.startsWith('/')) {
    const workdir = dir ? `${root.replace(/\/+$/, '')}/${dir}` : root;
    return { command: ['python', base], workdir };
  }
  // The server starts jobs in its root directory by default.
  return { command: ['python', path] };
}

/**
 * Add every command.
 */
export function addCommands(context: ICommandContext): ITrackers {
  const { app, client, model, trans } = context;
  const { commands, shell } = app;
  const trackers: ITrackers = {
    jobs: new WidgetTracker({ namespace: 'pytorchjob-job' }),
    logs: new WidgetTracker({ namespace: 'pytorchjob-logs' }),
    tensorboards: new WidgetTracker({ namespace: 'pytorchjob-tensorboard' })
  };
  const nameArg = (args: ReadonlyPartialJSONObject): string =>
    String(args['name'] ?? '');
  const nameSchema = {
    type: 'object',
    properties: { name: { type: 'string' } },
    required: ['name']
  };

  const openForm = async (initial: IJobBody | undefined): Promise<void> => {
    let config: IConfig;
    try {
      config = await context.config();
    } catch (error) {
      Notification.error(formatError(error, trans), { autoClose: 8000 });
      return;
    }
    const formModel = new JobFormModel({
      client,
      defaults: formDefaults(config, context.settings()),
      initial
    });
    const widget: MainAreaWidget<JobForm> = new MainAreaWidget({
      content: new JobForm({
        model: formModel,
        trans,
        onSubmitted: (job: IJob) => {
          model.track(job.name);
          for (const warning of job.warnings ?? []) {
            Notification.warning(warning, { autoClose: false });
          }
          widget.dispose();
          void commands.execute(CommandIDs.openJob, { name: job.name });
        }
      })
    });
    widget.id = `pytorchjob-form-${UUID.uuid4()}`;
    widget.title.label = trans.__('New PyTorch job');
    widget.title.icon = pytorchIcon;
    widget.title.closable = true;
    shell.add(widget, 'main');
    shell.activateById(widget.id);
  };

  commands.addCommand(CommandIDs.openPanel, {
    label: trans.__('Open PyTorch Jobs panel'),
    caption: trans.__('Show the PyTorch Jobs side panel'),
    icon: args => (args['isPalette'] ? undefined : pytorchIcon),
    describedBy: { args: { type: 'object', properties: {} } },
    execute: () => {
      shell.activateById(context.panelId);
    }
  });

  commands.addCommand(CommandIDs.newJob, {
    label: args =>
      args['isLauncher']
        ? trans.__('PyTorch Job')
        : trans.__('New PyTorch job'),
    caption: trans.__('Open the form of a new PyTorch job'),
    icon: args => (args['isPalette'] ? undefined : pytorchIcon),
    describedBy: {
      args: {
        type: 'object',
        properties: {
          command: { type: 'array', items: { type: 'string' } },
          workdir: { type: 'string' },
          spec: { type: 'object' }
        }
      }
    },
    execute: args => {
      const spec = args['spec'] as IJobBody | undefined;
      const command = args['command'] as string[] | undefined;
      const workdir = args['workdir'] as string | undefined;
      const initial: IJobBody | undefined = spec
        ? { ...spec }
        : command || workdir
          ? { command, workdir }
          : undefined;
      return openForm(initial);
    }
  });

  commands.addCommand(CommandIDs.runFile, {
    label: trans.__('Run as PyTorchJob…'),
    caption: trans.__('Open the job form to run this Python file'),
    icon: pytorchIcon,
    describedBy: {
      args: { type: 'object', properties: { path: { type: 'string' } } }
    },
    isVisible: () => {
      const item = context.fileBrowser?.selectedItems().next();
      return !!item && !item.done && item.value.path.endsWith('.py');
    },
    execute: async args => {
      let path = args['path'] as string | undefined;
      if (!path) {
        const item = context.fileBrowser?.selectedItems().next();
        if (!item || item.done) {
          return;
        }
        path = item.value.path;
      }
      // The drive prefix (`RTC:`) is not part of the server path.
      path = path.replace(/^[^/:]+:/, '');
      let root: string | null = PageConfig.getOption('serverRoot') || null;
      try {
        root = (await context.config()).rootDir ?? root;
      } catch {
        // Keep the page's idea of the root.
      }
      return openForm(bodyForFile(path, root));
    }
  });

  commands.addCommand(CommandIDs.openJob, {
    label: args =>
      args['name']
        ? trans.__('Open job %1', nameArg(args))
        : trans.__('Open job'),
    describedBy: { args: nameSchema },
    execute: args => {
      const name = nameArg(args);
      const existing = trackers.jobs.find(w => w.content.jobName === name);
      if (existing) {
        shell.activateById(existing.id);
        return;
      }
      const content = new JobView({
        name,
        client,
        commands,
        trans,
        refreshInterval: context.settings().refreshInterval
      });
      const widget = new MainAreaWidget({ content });
      widget.id = `pytorchjob-job-${name}`;
      widget.title.label = name;
      widget.title.caption = trans.__('PyTorch job %1', name);
      widget.title.icon = pytorchIcon;
      widget.title.closable = true;
      void trackers.jobs.add(widget);
      shell.add(widget, 'main');
      shell.activateById(widget.id);
    }
  });

  commands.addCommand(CommandIDs.openLogs, {
    label: args =>
      args['name']
        ? trans.__('Logs of %1', nameArg(args))
        : trans.__('Open logs'),
    describedBy: {
      args: {
        type: 'object',
        properties: { name: { type: 'string' }, replica: { type: 'string' } },
        required: ['name']
      }
    },
    execute: args => {
      const name = nameArg(args);
      const replica = (args['replica'] as string | undefined) ?? null;
      const existing = trackers.logs.find(w => w.content.jobName === name);
      if (existing) {
        if (replica) {
          existing.content.selectReplica(replica);
        }
        shell.activateById(existing.id);
        return;
      }
      const job = model.find(name);
      const content = new LogViewer({
        name,
        client,
        trans,
        replicas: job?.replicas.map(r => r.name),
        replica
      });
      const widget = new MainAreaWidget({ content });
      widget.id = `pytorchjob-logs-${name}`;
      widget.title.label = trans.__('Logs: %1', name);
      widget.title.icon = pytorchIcon;
      widget.title.closable = true;
      void trackers.logs.add(widget);
      shell.add(widget, 'main');
      shell.activateById(widget.id);
    }
  });

  commands.addCommand(CommandIDs.deleteJob, {
    label: args =>
      args['name']
        ? trans.__('Delete job %1', nameArg(args))
        : trans.__('Delete job'),
    describedBy: { args: nameSchema },
    execute: async args => {
      const name = nameArg(args);
      const result = await showDialog({
        title: trans.__('Delete job %1?', name),
        body: trans.__(
          'Every replica of %1 is stopped and the job is removed with its logs.',
          name
        ),
        buttons: [
          Dialog.cancelButton({ label: trans.__('Cancel') }),
          Dialog.warnButton({ label: trans.__('Delete') })
        ]
      });
      if (!result.button.accept) {
        return;
      }
      try {
        await client.deleteJob(name);
      } catch (error) {
        Notification.error(
          trans.__('Could not delete %1: %2', name, formatError(error, trans)),
          { autoClose: 8000 }
        );
        return;
      }
      trackers.jobs.find(w => w.content.jobName === name)?.dispose();
      await model.refresh();
    }
  });

  commands.addCommand(CommandIDs.cloneJob, {
    label: args =>
      args['name']
        ? trans.__('Clone & edit %1', nameArg(args))
        : trans.__('Clone & edit job'),
    describedBy: { args: nameSchema },
    execute: async args => {
      const name = nameArg(args);
      let job: IJob;
      try {
        job = await client.getJob(name);
      } catch (error) {
        Notification.error(formatError(error, trans), { autoClose: 8000 });
        return;
      }
      if (!job.spec) {
        Notification.warning(
          trans.__('Job %1 cannot be read back into the form.', name),
          { autoClose: 8000 }
        );
        return;
      }
      // A clone needs a name of its own: the model suggests one.
      return openForm({ ...job.spec, name: '' });
    }
  });

  const openTensorBoardTab = async (
    target: TensorBoardTarget
  ): Promise<TensorBoardView | undefined> => {
    const key = targetKey(target);
    const open = trackers.tensorboards.find(w => targetKey(w.target) === key);
    if (open) {
      shell.activateById(open.id);
      return open;
    }
    const widget = new TensorBoardView({
      target,
      trans,
      start: async value => {
        const board = await client.startTensorBoard(value);
        void context.tensorboards.refresh();
        return board;
      },
      stop: id => context.tensorboards.stop(id),
      // A failed check (network) is not a stop: the next tick asks again.
      isRunning: id => client.isTensorBoardRunning(id).catch(() => true),
      url: board => client.tensorBoardUrl(board),
      describeError: reason => formatError(reason, trans),
      refreshInterval: context.settings().tensorBoardRefreshInterval
    });
    widget.id = `pytorchjob-tensorboard-${UUID.uuid4()}`;
    shell.add(widget, 'main');
    shell.activateById(widget.id);
    void trackers.tensorboards.add(widget);
    let board: ITensorBoard;
    try {
      board = await widget.started;
    } catch (error) {
      Notification.error(
        trans.__('Could not start TensorBoard: %1', formatError(error, trans)),
        { autoClose: 10000 }
      );
      return widget;
    }
    // The same TensorBoard asked for another way (a job and its directory):
    // one tab.
    const twin = trackers.tensorboards.find(
      w => w !== widget && w.board?.id === board.id
    );
    if (twin) {
      widget.dispose();
      shell.activateById(twin.id);
      return twin;
    }
    return widget;
  };

  const pickDirectory = async (): Promise<string | null> => {
    if (!context.docManager) {
      Notification.warning(
        trans.__('No directory picker here: give a log directory.'),
        { autoClose: 8000 }
      );
      return null;
    }
    const result = await FileDialog.getExistingDirectory({
      manager: context.docManager,
      translator: context.translator,
      title: trans.__('Open TensorBoard on a directory'),
      defaultPath: context.fileBrowser?.model.path
    });
    // With nothing selected, the dialog answers the directory it shows.
    return result.button.accept ? (result.value?.[0]?.path ?? null) : null;
  };

  commands.addCommand(CommandIDs.openTensorBoard, {
    label: args =>
      args['name']
        ? trans.__('TensorBoard of %1', nameArg(args))
        : args['logdir']
          ? trans.__('TensorBoard on %1', String(args['logdir']))
          : trans.__('Open TensorBoard…'),
    caption: trans.__('Open TensorBoard in a tab, on a job or a directory'),
    icon: args => (args['isPalette'] ? undefined : pytorchIcon),
    describedBy: {
      args: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'A job' },
          logdir: {
            type: 'string',
            description: 'A directory, relative to the server root or absolute'
          }
        }
      }
    },
    execute: async args => {
      if (args['name']) {
        return openTensorBoardTab({ job: nameArg(args) });
      }
      // An empty logdir is the server root, as the file browser names it.
      const logdir =
        typeof args['logdir'] === 'string'
          ? args['logdir']
          : await pickDirectory();
      if (logdir === null) {
        return;
      }
      return openTensorBoardTab({ logdir: logdir || '.' });
    }
  });

  commands.addCommand(CommandIDs.openTensorBoardHere, {
    label: trans.__('Open TensorBoard Here'),
    caption: trans.__('Open TensorBoard on this directory'),
    icon: pytorchIcon,
    describedBy: { args: { type: 'object', properties: {} } },
    isVisible: () => {
      const item = context.fileBrowser?.selectedItems().next();
      return !!item && !item.done && item.value.type === 'directory';
    },
    execute: () => {
      const item = context.fileBrowser?.selectedItems().next();
      if (!item || item.done || item.value.type !== 'directory') {
        return;
      }
      return commands.execute(CommandIDs.openTensorBoard, {
        logdir: item.value.path
      });
    }
  });

  commands.addCommand(CommandIDs.stopTensorBoard, {
    label: trans.__('Stop TensorBoard'),
    describedBy: {
      args: {
        type: 'object',
        properties: { id: { type: 'string' } },
        required: ['id']
      }
    },
    execute: async args => {
      const id = String(args['id'] ?? '');
      try {
        await context.tensorboards.stop(id);
      } catch (error) {
        Notification.error(
          trans.__('Could not stop TensorBoard: %1', formatError(error, trans)),
          { autoClose: 8000 }
        );
      }
    }
  });

  // A TensorBoard stopped from the list (or a tab) takes its tabs along.
  context.tensorboards.stopped.connect((_, id) => {
    trackers.tensorboards.forEach(widget => {
      if (widget.board?.id === id) {
        widget.dispose();
      }
    });
  });

  commands.addCommand(CommandIDs.refresh, {
    label: trans.__('Refresh the job list'),
    describedBy: { args: { type: 'object', properties: {} } },
    execute: () => model.refresh()
  });

  model.jobFinished.connect((_, job) => {
    if (!context.settings().notifications) {
      return;
    }
    const actions = [
      {
        label: trans.__('Open'),
        callback: () =>
          void commands.execute(CommandIDs.openJob, { name: job.name })
      },
      {
        label: trans.__('Logs'),
        callback: () =>
          void commands.execute(CommandIDs.openLogs, { name: job.name })
      }
    ];
    if (job.state === 'Succeeded') {
      Notification.success(trans.__('PyTorch job %1 succeeded', job.name), {
        autoClose: 8000,
        actions
      });
    } else {
      Notification.error(trans.__('PyTorch job %1 failed', job.name), {
        autoClose: false,
        actions
      });
    }
  });

  return trackers;
}

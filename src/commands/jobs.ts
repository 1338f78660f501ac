/**
 * The commands on jobs: the form (new, run a file, clone), a job's view,
 * deletion, and the notification when a tracked job finishes.
 *
 * @packageDocumentation
 */

import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { PageConfig } from '@jupyterlab/coreutils';
import { UUID } from '@lumino/coreutils';

import { CommandIDs } from '../commandids';
import { bodyForFile, formDefaults } from '../form/defaults';
import { JobForm } from '../form/form';
import { JobFormModel } from '../form/model';
import { formatError } from '../format';
import { pytorchIcon } from '../icons';
import { JobView } from '../jobview';
import { finishedNotice } from '../progress';
import { warningsOf } from '../servermessages';
import { IConfig, IJob, IJobBody } from '../tokens';
import {
  ICommandContext,
  ITrackers,
  jobLabel,
  NAME_SCHEMA,
  nameArg,
  notifyError,
  pytorchTab,
  showInMainArea
} from './context';

/**
 * Add the commands on jobs.
 */
export function addJobCommands(
  context: ICommandContext,
  trackers: ITrackers
): void {
  const { app, client, trans } = context;
  const { commands, shell } = app;
  addFormCommands(context);

  commands.addCommand(CommandIDs.openJob, {
    label: args =>
      jobLabel(
        args,
        name => trans.__('Open job %1', name),
        trans.__('Open job')
      ),
    describedBy: { args: NAME_SCHEMA },
    execute: args => {
      const name = nameArg(args);
      showInMainArea(shell, {
        tracker: trackers.jobs,
        isOpen: widget => widget.content.jobName === name,
        create: () =>
          pytorchTab(
            new JobView({
              name,
              client,
              commands,
              trans,
              refreshInterval: context.settings().refreshInterval
            }),
            {
              id: `pytorchjob-job-${name}`,
              label: name,
              caption: trans.__('PyTorch job %1', name)
            }
          )
      });
    }
  });

  commands.addCommand(CommandIDs.deleteJob, {
    label: args =>
      jobLabel(
        args,
        name => trans.__('Delete job %1', name),
        trans.__('Delete job')
      ),
    describedBy: { args: NAME_SCHEMA },
    execute: args => Private.deleteJob(context, trackers, nameArg(args))
  });

  commands.addCommand(CommandIDs.suspendJob, {
    label: args =>
      jobLabel(
        args,
        name => trans.__('Suspend job %1', name),
        trans.__('Suspend job')
      ),
    describedBy: { args: NAME_SCHEMA },
    execute: args =>
      Private.setSuspended(context, trackers, nameArg(args), true)
  });

  commands.addCommand(CommandIDs.resumeJob, {
    label: args =>
      jobLabel(
        args,
        name => trans.__('Resume job %1', name),
        trans.__('Resume job')
      ),
    describedBy: { args: NAME_SCHEMA },
    execute: args =>
      Private.setSuspended(context, trackers, nameArg(args), false)
  });

  notifyFinishedJobs(context);
}

/**
 * Add the commands that open the job form: new, on a file, a clone.
 */
function addFormCommands(context: ICommandContext): void {
  const { app, trans } = context;
  const { commands } = app;
  const openForm = (initial: IJobBody | undefined) =>
    Private.openForm(context, initial);

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
      const path = Private.selectedFile(context, args['path']);
      return path === null
        ? undefined
        : openForm(bodyForFile(path, await Private.serverRoot(context)));
    }
  });

  commands.addCommand(CommandIDs.cloneJob, {
    label: args =>
      jobLabel(
        args,
        name => trans.__('Clone & edit %1', name),
        trans.__('Clone & edit job')
      ),
    describedBy: {
      args: {
        ...NAME_SCHEMA,
        properties: {
          ...NAME_SCHEMA.properties,
          resumeFrom: { type: 'string' }
        }
      }
    },
    execute: async args => {
      // The server names the clone <job>-N and moves a log directory naming
      // the job along: two runs never write one TensorBoard run.
      const name = nameArg(args);
      const resumeFrom = args['resumeFrom'];
      let spec: IJobBody;
      try {
        spec = await context.client.cloneBody(
          name,
          ...(typeof resumeFrom === 'string' && resumeFrom ? [resumeFrom] : [])
        );
      } catch (error) {
        notifyError(
          trans.__('Could not clone %1: %2', name, formatError(error, trans))
        );
        return undefined;
      }
      return openForm(spec);
    }
  });
}

/**
 * Notify when a tracked job finishes (unless the settings say not to), naming
 * its final key metric and how long it ran, with buttons to its view and its
 * logs.
 */
function notifyFinishedJobs(context: ICommandContext): void {
  const { app, model, trans } = context;
  model.jobFinished.connect((_, job) => {
    if (!context.settings().notifications) {
      return;
    }
    const actions = [
      {
        label: trans.__('Open'),
        callback: () =>
          void app.commands.execute(CommandIDs.openJob, { name: job.name })
      },
      {
        label: trans.__('Logs'),
        callback: () =>
          void app.commands.execute(CommandIDs.openLogs, { name: job.name })
      }
    ];
    if (job.state === 'Succeeded') {
      Notification.success(finishedNotice(job, trans), {
        autoClose: 8000,
        actions
      });
    } else {
      Notification.error(finishedNotice(job, trans), {
        autoClose: false,
        actions
      });
    }
  });
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * Open a new form, pre-filled with a body; once submitted, the form gives
   * way to the job's view.
   */
  export async function openForm(
    context: ICommandContext,
    initial: IJobBody | undefined
  ): Promise<void> {
    const { app, client, model, trans } = context;
    let config: IConfig;
    try {
      config = await context.config();
    } catch (error) {
      notifyError(formatError(error, trans));
      return;
    }
    const formModel = new JobFormModel({
      client,
      defaults: formDefaults(config, context.settings()),
      initial,
      trans
    });
    const { widget } = showInMainArea(app.shell, {
      create: () =>
        pytorchTab(
          new JobForm({
            model: formModel,
            trans,
            editorFactory:
              context.editorServices?.factoryService.newInlineEditor ?? null,
            onSubmitted: (job: IJob) => {
              model.track(job.name);
              for (const warning of warningsOf(job, trans)) {
                Notification.warning(warning, { autoClose: false });
              }
              widget.dispose();
              void app.commands.execute(CommandIDs.openJob, {
                name: job.name
              });
            }
          }),
          // No label: the form names its kind (New PyTorchJob, New TrainJob).
          { id: `pytorchjob-form-${UUID.uuid4()}` }
        )
    });
  }

  /**
   * The server path of the file a command is about: its `path` argument, or
   * the file browser's selection; null for none.
   */
  export function selectedFile(
    context: ICommandContext,
    pathArg: unknown
  ): string | null {
    let path = pathArg as string | undefined;
    if (!path) {
      const item = context.fileBrowser?.selectedItems().next();
      if (!item || item.done) {
        return null;
      }
      path = item.value.path;
    }
    // The drive prefix (`RTC:`) is not part of the server path.
    return path.replace(/^[^/:]+:/, '');
  }

  /**
   * The server root's absolute path: the server's word, else the page's.
   */
  export async function serverRoot(
    context: ICommandContext
  ): Promise<string | null> {
    const root: string | null = PageConfig.getOption('serverRoot') || null;
    try {
      return (await context.config()).rootDir ?? root;
    } catch {
      // Keep the page's idea of the root.
      return root;
    }
  }

  /**
   * Suspend or resume a job; the list and the job's view show its new state.
   */
  export async function setSuspended(
    context: ICommandContext,
    trackers: ITrackers,
    name: string,
    suspend: boolean
  ): Promise<IJob | undefined> {
    const { client, model, trans } = context;
    if (suspend) {
      // Resuming starts the replicas from scratch: say so before stopping them.
      const result = await showDialog({
        title: trans.__('Suspend job %1?', name),
        body: trans.__(
          'Its replicas stop now and the job is kept. Resuming starts them again from scratch: what the training did not save in a checkpoint is lost.'
        ),
        buttons: [
          Dialog.cancelButton({ label: trans.__('Cancel') }),
          Dialog.warnButton({ label: trans.__('Suspend') })
        ]
      });
      if (!result.button.accept) {
        return undefined;
      }
    }
    const view = trackers.jobs.find(w => w.content.jobName === name)?.content;
    view?.setPending(suspend ? 'suspend' : 'resume');
    let job: IJob;
    try {
      job = await client.setSuspended(name, suspend);
    } catch (error) {
      view?.setPending(null);
      notifyError(
        suspend
          ? trans.__(
              'Could not suspend %1: %2',
              name,
              formatError(error, trans)
            )
          : trans.__('Could not resume %1: %2', name, formatError(error, trans))
      );
      return undefined;
    }
    await Promise.all([model.refresh(), view?.refresh()]);
    return job;
  }

  /**
   * Delete a job once the user confirms; its view closes.
   */
  export async function deleteJob(
    context: ICommandContext,
    trackers: ITrackers,
    name: string
  ): Promise<void> {
    const { client, model, trans } = context;
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
      notifyError(
        trans.__('Could not delete %1: %2', name, formatError(error, trans))
      );
      return;
    }
    trackers.jobs.find(w => w.content.jobName === name)?.dispose();
    await model.refresh();
  }
}

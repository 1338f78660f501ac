/**
 * The TensorBoard commands: open a tab on a job or a directory, open one
 * from the file browser, stop one (its tabs close).
 *
 * @packageDocumentation
 */

import { Notification } from '@jupyterlab/apputils';
import { FileDialog } from '@jupyterlab/filebrowser';
import { ReadonlyPartialJSONObject, UUID } from '@lumino/coreutils';

import { CommandIDs } from '../commandids';
import { formatError } from '../format';
import { pytorchIcon } from '../icons';
import {
  TensorBoardTarget,
  TensorBoardView,
  targetKey
} from '../tensorboard/view';
import { ITensorBoard } from '../tokens';
import {
  ICommandContext,
  ITrackers,
  nameArg,
  NO_ARGS,
  notifyError,
  showInMainArea
} from './context';

/**
 * Add the TensorBoard commands.
 */
export function addTensorBoardCommands(
  context: ICommandContext,
  trackers: ITrackers
): void {
  const { app, trans } = context;
  const { commands } = app;

  commands.addCommand(CommandIDs.openTensorBoard, {
    label: args =>
      Array.isArray(args['names'])
        ? trans.__('TensorBoard of %1', args['names'].join(', '))
        : args['name']
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
          names: {
            type: 'array',
            items: { type: 'string' },
            description: 'Jobs: one TensorBoard, a run per job'
          },
          logdir: {
            type: 'string',
            description: 'A directory, relative to the server root or absolute'
          },
          tag: {
            type: 'string',
            description: 'With name: show this scalar (its tag) at once'
          },
          failure: {
            type: 'string',
            description:
              'Why it failed to start before (a restored tab): shown in the tab with Retry, nothing started'
          }
        }
      }
    },
    execute: args => Private.openOn(context, trackers, args)
  });

  commands.addCommand(CommandIDs.openTensorBoardHere, {
    label: trans.__('Open TensorBoard Here'),
    caption: trans.__('Open TensorBoard on this directory'),
    icon: pytorchIcon,
    describedBy: NO_ARGS,
    isVisible: () => Private.selectedDirectory(context) !== null,
    execute: () => {
      const logdir = Private.selectedDirectory(context);
      if (logdir === null) {
        return;
      }
      return commands.execute(CommandIDs.openTensorBoard, { logdir });
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
        notifyError(
          trans.__('Could not stop TensorBoard: %1', formatError(error, trans))
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
}

/**
 * Module-private helpers.
 */
namespace Private {
  /**
   * Open a TensorBoard tab on what a command's arguments name: a job, a
   * directory, or (neither) one the user picks.
   */
  export async function openOn(
    context: ICommandContext,
    trackers: ITrackers,
    args: ReadonlyPartialJSONObject
  ): Promise<TensorBoardView | undefined> {
    const failure =
      typeof args['failure'] === 'string' ? args['failure'] : null;
    if (Array.isArray(args['names'])) {
      return openTab(
        context,
        trackers,
        { jobs: args['names'].map(String) },
        failure
      );
    }
    if (args['name']) {
      const view = await openTab(
        context,
        trackers,
        { job: nameArg(args) },
        failure
      );
      if (view && typeof args['tag'] === 'string') {
        await view.showScalar(args['tag']).catch(() => {
          // openTab told why TensorBoard did not start.
        });
      }
      return view;
    }
    // An empty logdir is the server root, as the file browser names it.
    const logdir =
      typeof args['logdir'] === 'string'
        ? args['logdir']
        : await pickDirectory(context);
    if (logdir === null) {
      return;
    }
    return openTab(context, trackers, { logdir: logdir || '.' }, failure);
  }

  /**
   * Open a TensorBoard tab on a target, or reveal the one open on it (or,
   * once started, on the same TensorBoard asked for another way).
   *
   * @param failure - Why it failed to start before (a restored tab): the tab
   *   says it again, with *Retry*, and neither starts nor toasts.
   */
  export async function openTab(
    context: ICommandContext,
    trackers: ITrackers,
    target: TensorBoardTarget,
    failure: string | null = null
  ): Promise<TensorBoardView | undefined> {
    const { app, client, trans } = context;
    const key = targetKey(target);
    const { widget, isNew } = showInMainArea(app.shell, {
      tracker: trackers.tensorboards,
      isOpen: open => targetKey(open.target) === key,
      create: () => {
        const view = new TensorBoardView({
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
          refreshInterval: context.settings().tensorBoardRefreshInterval,
          failure
        });
        view.id = `pytorchjob-tensorboard-${UUID.uuid4()}`;
        // A restored tab says how its last start went: a failure again, with
        // Retry, instead of a new start and toast on every reload.
        view.failureChanged.connect(() => {
          void trackers.tensorboards.save(view);
        });
        return view;
      }
    });
    if (!isNew) {
      // Asked for again: a tab that failed tries again (it says how, itself).
      if (failure === null && widget.failure !== null) {
        void widget.startAgain();
      }
      return widget;
    }
    let board: ITensorBoard;
    try {
      board = await widget.started;
    } catch (error) {
      if (failure === null) {
        Notification.error(
          trans.__(
            'Could not start TensorBoard: %1',
            formatError(error, trans)
          ),
          { autoClose: 10000 }
        );
      }
      return widget;
    }
    // The same TensorBoard asked for another way (a job and its directory):
    // one tab.
    const twin = trackers.tensorboards.find(
      w => w !== widget && w.board?.id === board.id
    );
    if (twin) {
      widget.dispose();
      app.shell.activateById(twin.id);
      return twin;
    }
    return widget;
  }

  /**
   * Ask the user for a directory; null when there is no picker or the
   * user cancels.
   */
  export async function pickDirectory(
    context: ICommandContext
  ): Promise<string | null> {
    const { trans } = context;
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
  }

  /**
   * The directory selected in the file browser; null for none (or a file).
   */
  export function selectedDirectory(context: ICommandContext): string | null {
    const item = context.fileBrowser?.selectedItems().next();
    return item && !item.done && item.value.type === 'directory'
      ? item.value.path
      : null;
  }
}

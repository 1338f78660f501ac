/**
 * Running TensorBoards in JupyterLab's "Running Terminals and Kernels" panel.
 *
 * @packageDocumentation
 */

import { IRunningSessionManagers } from '@jupyterlab/running';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { IDisposable } from '@lumino/disposable';

import { CommandIDs } from '../commandids';
import { pytorchIcon } from '../icons';
import { boardArgs, boardLabel, TensorBoardsModel } from './model';

/**
 * Add a "TensorBoards" section to the Running panel: each running TensorBoard
 * opens in a tab on click and stops with the section's shutdown button.
 */
export function addRunningTensorBoards(
  managers: IRunningSessionManagers,
  model: TensorBoardsModel,
  commands: CommandRegistry,
  trans: TranslationBundle
): IDisposable {
  return managers.add({
    name: trans.__('TensorBoards'),
    running: () =>
      model.boards.map(board => ({
        className: 'jp-PyTorchJobTensorBoards-running',
        context: board.id,
        icon: () => pytorchIcon,
        label: () => boardLabel(board),
        labelTitle: () => trans.__('TensorBoard on %1', board.logdir),
        open: () =>
          void commands.execute(CommandIDs.openTensorBoard, boardArgs(board)),
        shutdown: () =>
          void commands.execute(CommandIDs.stopTensorBoard, { id: board.id })
      })),
    shutdownAll: () => {
      for (const board of [...model.boards]) {
        void commands.execute(CommandIDs.stopTensorBoard, { id: board.id });
      }
    },
    refreshRunning: () => void model.refresh(),
    runningChanged: model.changed,
    shutdownLabel: trans.__('Stop TensorBoard'),
    shutdownAllLabel: trans.__('Stop All'),
    shutdownAllConfirmationText: () =>
      trans.__('Are you sure you want to stop all running TensorBoards?')
  });
}

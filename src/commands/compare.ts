/**
 * Comparing jobs: their differing hyperparameters and metrics in a tab.
 *
 * @packageDocumentation
 */

import { Notification } from '@jupyterlab/apputils';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { CommandIDs } from '../commandids';
import { ComparisonView } from '../compare';
import {
  ICommandContext,
  ITrackers,
  pytorchTab,
  showInMainArea
} from './context';

/**
 * The jobs a compare command is about: its `names`, else the panel's
 * selection.
 */
export function namesArg(
  args: ReadonlyPartialJSONObject,
  selected: readonly string[]
): string[] {
  const names = args['names'];
  return Array.isArray(names) ? names.map(String) : [...selected];
}

/**
 * Add `pytorchjob:compare-jobs`.
 */
export function addCompareCommands(
  context: ICommandContext,
  trackers: ITrackers
): void {
  const { app, client, model, trans } = context;
  const { commands, shell } = app;
  commands.addCommand(CommandIDs.compareJobs, {
    label: args =>
      trans.__('Compare %1 jobs', namesArg(args, model.selected).length),
    caption: trans.__(
      'Compare the jobs selected in the panel: hyperparameters and metrics'
    ),
    describedBy: {
      args: {
        type: 'object',
        properties: {
          names: { type: 'array', items: { type: 'string' }, minItems: 2 }
        }
      }
    },
    isEnabled: args => namesArg(args, model.selected).length >= 2,
    execute: args => {
      const names = namesArg(args, model.selected);
      if (names.length < 2) {
        Notification.warning(
          trans.__('Select two or more jobs in the panel to compare them.'),
          { autoClose: 8000 }
        );
        return;
      }
      const key = names.join(',');
      showInMainArea(shell, {
        tracker: trackers.comparisons,
        create: () => {
          const widget = pytorchTab(
            new ComparisonView({
              names,
              trans,
              load: value => client.compare(value),
              openTensorBoard: jobs =>
                void commands.execute(CommandIDs.openTensorBoard, {
                  names: jobs
                })
            }),
            {
              id: `pytorchjob-compare-${key}`,
              label: trans.__('Compare: %1', names.join(', ')),
              caption: trans.__('Comparison of %1', names.join(', '))
            }
          );
          return widget;
        },
        isOpen: widget => widget.content.names.join(',') === key
      });
    }
  });
}

/**
 * Every command of the extension, registered by area: jobs (form, view,
 * delete, clone), logs, TensorBoard, the side panel.
 *
 * @packageDocumentation
 */

import { WidgetTracker } from '@jupyterlab/apputils';

import { addCompareCommands } from './compare';
import { ICommandContext, ITrackers } from './context';
import { addJobCommands } from './jobs';
import { addLogCommands } from './logs';
import { addPanelCommands } from './panel';
import { addTensorBoardCommands } from './tensorboard';

export { ICommandContext, ITrackers } from './context';

/**
 * Add every command; the trackers of the main-area widgets come back for the
 * layout restorer.
 */
export function addCommands(context: ICommandContext): ITrackers {
  const trackers: ITrackers = {
    jobs: new WidgetTracker({ namespace: 'pytorchjob-job' }),
    logs: new WidgetTracker({ namespace: 'pytorchjob-logs' }),
    tensorboards: new WidgetTracker({ namespace: 'pytorchjob-tensorboard' }),
    comparisons: new WidgetTracker({ namespace: 'pytorchjob-compare' })
  };
  addPanelCommands(context);
  addJobCommands(context, trackers);
  addLogCommands(context, trackers);
  addTensorBoardCommands(context, trackers);
  addCompareCommands(context, trackers);
  return trackers;
}

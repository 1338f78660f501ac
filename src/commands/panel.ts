/**
 * The commands of the side panel: reveal it, refresh its list.
 *
 * @packageDocumentation
 */

import { CommandIDs } from '../commandids';
import { pytorchIcon } from '../icons';
import { ICommandContext, NO_ARGS } from './context';

/**
 * Add the commands of the side panel.
 */
export function addPanelCommands(context: ICommandContext): void {
  const { app, model, trans } = context;
  app.commands.addCommand(CommandIDs.openPanel, {
    label: trans.__('Open PyTorch Jobs panel'),
    caption: trans.__('Show the PyTorch Jobs side panel'),
    icon: args => (args['isPalette'] ? undefined : pytorchIcon),
    describedBy: NO_ARGS,
    execute: () => {
      app.shell.activateById(context.panelId);
    }
  });

  app.commands.addCommand(CommandIDs.refresh, {
    label: trans.__('Refresh the job list'),
    describedBy: NO_ARGS,
    execute: () => model.refresh()
  });
}

/**
 * The command that opens a job's logs.
 *
 * @packageDocumentation
 */

import { CommandIDs } from '../commandids';
import { LogViewer } from '../logs/viewer';
import {
  ICommandContext,
  ITrackers,
  jobLabel,
  nameArg,
  pytorchTab,
  showInMainArea
} from './context';

/**
 * Add the command on logs: one tab per job, its replica picked on request.
 */
export function addLogCommands(
  context: ICommandContext,
  trackers: ITrackers
): void {
  const { app, client, model, trans } = context;
  app.commands.addCommand(CommandIDs.openLogs, {
    label: args =>
      jobLabel(
        args,
        name => trans.__('Logs of %1', name),
        trans.__('Open logs')
      ),
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
      showInMainArea(app.shell, {
        tracker: trackers.logs,
        isOpen: widget => widget.content.jobName === name,
        reveal: widget => {
          if (replica) {
            widget.content.selectReplica(replica);
          }
        },
        create: () =>
          pytorchTab(
            new LogViewer({
              name,
              client,
              trans,
              replicas: model.find(name)?.replicas.map(r => r.name),
              replica,
              failed: model.find(name)?.state === 'Failed'
            }),
            {
              id: `pytorchjob-logs-${name}`,
              label: trans.__('Logs: %1', name)
            }
          )
      });
    }
  });
}

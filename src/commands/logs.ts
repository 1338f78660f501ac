/**
 * The command that opens a job's logs.
 *
 * @packageDocumentation
 */

import { CommandIDs } from '../commandids';
import { logStart } from '../failure';
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
 * Add the command on logs: one tab per job, its replica picked on request, a
 * failed job's on the run that failed.
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
        properties: {
          name: { type: 'string' },
          replica: { type: 'string' },
          previous: { type: 'boolean' },
          wrap: { type: 'boolean', description: 'Wrap long lines' },
          onlyMatching: {
            type: 'boolean',
            description: 'Show only the lines matching the search'
          },
          timestamps: { type: 'boolean', description: 'Show each line’s time' }
        },
        required: ['name']
      }
    },
    execute: args => {
      const name = nameArg(args);
      const replica = (args['replica'] as string | undefined) ?? null;
      const asked = args['previous'] as boolean | undefined;
      const job = model.find(name);
      const start = logStart(job, asked, trans);
      showInMainArea(app.shell, {
        tracker: trackers.logs,
        isOpen: widget => widget.content.jobName === name,
        reveal: widget => {
          if (replica) {
            widget.content.selectReplica(replica);
          }
          // An open viewer keeps what the user chose unless asked again.
          if (asked !== undefined) {
            widget.content.showPrevious(start.previous, start.why);
          }
        },
        create: () => {
          const viewer = new LogViewer({
            name,
            client,
            trans,
            replicas: job?.replicas.map(r => r.name),
            replica,
            previous: start.previous,
            why: start.why,
            failed: job?.state === 'Failed',
            wrap: args['wrap'] === true,
            onlyMatching: args['onlyMatching'] === true,
            timestamps: args['timestamps'] === true
          });
          const tab = pytorchTab(viewer, {
            id: `pytorchjob-logs-${name}`,
            label: trans.__('Logs: %1', name)
          });
          // A restored tab keeps how its lines were shown.
          viewer.viewOptionsChanged.connect(() => {
            void trackers.logs.save(tab);
          });
          return tab;
        }
      });
    }
  });
}

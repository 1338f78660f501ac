/**
 * What every group of commands shares: the context they work with, the
 * trackers of the main-area widgets, and how a widget is shown there.
 *
 * @packageDocumentation
 */

import { IEditorServices } from '@jupyterlab/codeeditor';
import { JupyterFrontEnd } from '@jupyterlab/application';
import {
  MainAreaWidget,
  Notification,
  WidgetTracker
} from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ITranslator, TranslationBundle } from '@jupyterlab/translation';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';

import { PyTorchJobClient } from '../api';
import { ComparisonView } from '../compare';
import { pytorchIcon } from '../icons';
import { JobView } from '../jobview';
import { LogViewer } from '../logs/viewer';
import { JobsModel } from '../model';
import { IPluginSettings } from '../settings';
import { TensorBoardsModel } from '../tensorboard/model';
import { TensorBoardView } from '../tensorboard/view';
import { IConfig } from '../tokens';

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
   * JupyterLab's editors (the form's YAML preview edits in one); null: a
   * plain text area.
   */
  editorServices: IEditorServices | null;

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

  /**
   * Comparison tabs.
   */
  comparisons: WidgetTracker<MainAreaWidget<ComparisonView>>;
}

/**
 * How to show a widget in the main area.
 */
export interface IShowOptions<T extends Widget> {
  /**
   * Make the widget when none is open yet.
   */
  create: () => T;

  /**
   * The tracker of such widgets: the new one is added to it.
   */
  tracker?: WidgetTracker<T>;

  /**
   * Which tracked widget already shows what is asked for.
   */
  isOpen?: (widget: T) => boolean;

  /**
   * Called on the open widget before it is revealed.
   */
  reveal?: (widget: T) => void;
}

/**
 * Show a widget in the main area: reveal the open one if there is one, or
 * add a new one (tracked), and activate it.
 *
 * @returns The widget shown, and whether it is a new one.
 */
export function showInMainArea<T extends Widget>(
  shell: JupyterFrontEnd.IShell,
  options: IShowOptions<T>
): { widget: T; isNew: boolean } {
  const { tracker, isOpen } = options;
  const open = tracker && isOpen ? tracker.find(isOpen) : undefined;
  if (open) {
    options.reveal?.(open);
    shell.activateById(open.id);
    return { widget: open, isNew: false };
  }
  const widget = options.create();
  if (tracker) {
    void tracker.add(widget);
  }
  shell.add(widget, 'main');
  shell.activateById(widget.id);
  return { widget, isNew: true };
}

/**
 * A closable main-area tab with the PyTorch icon around some content.
 */
export function pytorchTab<T extends Widget>(
  content: T,
  title: { id: string; label?: string; caption?: string }
): MainAreaWidget<T> {
  const widget = new MainAreaWidget({ content });
  widget.id = title.id;
  if (title.label !== undefined) {
    // Without one, the tab shows the content's own (the form's, by kind).
    widget.title.label = title.label;
  }
  if (title.caption !== undefined) {
    widget.title.caption = title.caption;
  }
  widget.title.icon = pytorchIcon;
  widget.title.closable = true;
  return widget;
}

/**
 * Tell the user that something failed (the message stays 8 s).
 */
export function notifyError(message: string): void {
  Notification.error(message, { autoClose: 8000 });
}

/**
 * The `name` argument of a command.
 */
export function nameArg(args: ReadonlyPartialJSONObject): string {
  return String(args['name'] ?? '');
}

/**
 * A command's label: about the job its arguments name, if any.
 */
export function jobLabel(
  args: ReadonlyPartialJSONObject,
  named: (name: string) => string,
  unnamed: string
): string {
  return args['name'] ? named(nameArg(args)) : unnamed;
}

/**
 * The arguments' schema of a command on one job.
 */
export const NAME_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name']
};

/**
 * The arguments' schema of a command without arguments.
 */
export const NO_ARGS = { args: { type: 'object', properties: {} } };

/**
 * The command IDs of the extension: a leaf module, so that every view can
 * name a command without importing the commands themselves.
 *
 * @packageDocumentation
 */

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
   * Suspend a job: its replicas stop, the job stays (args: `name`).
   */
  export const suspendJob = 'pytorchjob:suspend-job';

  /**
   * Resume a suspended job: its replicas start again (args: `name`).
   */
  export const resumeJob = 'pytorchjob:resume-job';

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
   * Compare jobs in a tab: their differing hyperparameters and their metrics
   * (args: `names`, two or more jobs; none: the panel's selection).
   */
  export const compareJobs = 'pytorchjob:compare-jobs';

  /**
   * Refresh the job list.
   */
  export const refresh = 'pytorchjob:refresh';
}

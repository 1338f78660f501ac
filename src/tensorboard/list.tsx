/**
 * The running TensorBoards, as a section of the side panel.
 *
 * @packageDocumentation
 */

import { TranslationBundle } from '@jupyterlab/translation';
import { launchIcon, stopIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import { formatAge, formatError } from '../format';
import { ITensorBoard } from '../tokens';
import { boardLabel, TensorBoardsModel } from './model';

/**
 * The list of running TensorBoards with *Open* and *Stop* on each.
 */
export function TensorBoardList(props: {
  model: TensorBoardsModel;
  now: number;
  trans: TranslationBundle;
  open: (board: ITensorBoard) => void;
  stop: (board: ITensorBoard) => void;
}): JSX.Element {
  const { model, now, trans, open, stop } = props;
  const boards = model.boards;
  return (
    <section
      className="jp-PyTorchJobTensorBoards"
      aria-label={trans.__('Running TensorBoards')}
    >
      <h3 className="jp-PyTorchJobTensorBoards-title">
        {trans.__('TensorBoards (%1)', boards.length)}
      </h3>
      {model.error && (
        <p className="jp-PyTorchJobPanel-error" role="alert">
          {formatError(model.error, trans)}
        </p>
      )}
      {boards.length === 0 ? (
        <p className="jp-PyTorchJobPanel-empty">{trans.__('None running.')}</p>
      ) : (
        <ul className="jp-PyTorchJobPanel-list">
          {boards.map(board => {
            const label = boardLabel(board);
            const started = board.started ?? NaN;
            return (
              <li
                key={board.id}
                className="jp-PyTorchJobPanel-item jp-PyTorchJobTensorBoards-item"
                data-tensorboard={board.id}
              >
                <div className="jp-PyTorchJobPanel-row">
                  <button
                    type="button"
                    className="jp-PyTorchJobPanel-name"
                    title={trans.__('Open TensorBoard on %1', board.logdir)}
                    onClick={() => open(board)}
                  >
                    {label}
                  </button>
                  <span className="jp-PyTorchJobPanel-rowActions">
                    <button
                      type="button"
                      className="jp-PyTorchJobPanel-iconButton"
                      title={trans.__('Open')}
                      aria-label={trans.__('Open TensorBoard %1', label)}
                      onClick={() => open(board)}
                    >
                      <launchIcon.react tag="span" elementSize="normal" />
                    </button>
                    <button
                      type="button"
                      className="jp-PyTorchJobPanel-iconButton"
                      title={trans.__('Stop')}
                      aria-label={trans.__('Stop TensorBoard %1', label)}
                      onClick={() => stop(board)}
                    >
                      <stopIcon.react tag="span" elementSize="normal" />
                    </button>
                  </span>
                </div>
                <div className="jp-PyTorchJobPanel-details">
                  <span
                    className="jp-PyTorchJobTensorBoards-logdir"
                    title={board.logdir}
                  >
                    {board.logdir}
                  </span>
                  {Number.isFinite(started) && (
                    <span title={trans.__('Started')}>
                      {formatAge(started, now, trans)}
                    </span>
                  )}
                </div>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

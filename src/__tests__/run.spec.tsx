/**
 * Tests of the run record in the UI: the job view's Run section (hparams,
 * checkpoints with *Copy path* and *Resume from here*, artifacts), the
 * resumed clone's body, and the comparison by what the runs were (reported
 * hparams first, command tokens that differ, volumes as flags, no best for a
 * hyperparameter, the jobs *Compare in TensorBoard* leaves out).
 */

import { Clipboard } from '@jupyterlab/apputils';
import { nullTranslator } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { PyTorchJobClient } from '../api';
import { CommandIDs } from '../commandids';
import { differingTokens, formatValue, parameterCells } from '../comparecells';
import { ComparisonView } from '../compare';
import { RunSection } from '../run';
import { IComparison, IRunRecord } from '../tokens';

const trans = nullTranslator.load('jupyter_pytorchjob');

async function settled(widget: Widget & { renderPromise?: Promise<any> }) {
  MessageLoop.sendMessage(widget, Widget.Msg.UpdateRequest);
  await widget.renderPromise;
  for (let i = 0; i < 5; i++) {
    await new Promise(resolve => setTimeout(resolve, 0));
  }
}

const RUN: IRunRecord = {
  hparams: { lr: 0.001, 'optim.name': 'adam', layers: [64, 64] },
  metrics: { final: { loss: 0.2 }, history: {} },
  checkpoints: [
    {
      path: '/mnt/ws/run/ckpt-100',
      step: 100,
      time: 1700000000,
      metrics: { loss: 0.5 },
      source: 'report'
    },
    {
      path: '/mnt/ws/run/ckpt-200',
      step: 200,
      time: 1700000100,
      metrics: { loss: 0.2 },
      source: 'report'
    }
  ],
  artifacts: [{ name: 'model', path: '/mnt/ws/run/model.onnx', time: null }],
  modes: {},
  dropped: 2
};

describe('comparison cells', () => {
  it('shows only the tokens of commands that differ', () => {
    expect(
      differingTokens([
        ['python', 'train.py', '--lr', '0.1', '--epochs', '3'],
        ['python', 'train.py', '--lr', '0.01', '--epochs', '3'],
        null
      ])
    ).toEqual(['… 0.1 …', '… 0.01 …', null]);
    // No shared start or end: the whole lines.
    expect(differingTokens([['a', 'b'], ['c']])).toEqual(['a b', 'c']);
    // One shorter than the shared part: nothing of it left but the marks.
    expect(
      differingTokens([
        ['x', 'y'],
        ['x', 'y', 'z']
      ])
    ).toEqual(['…', '… z']);
  });

  it('writes volumes and tolerations as the flags do, never JSON', () => {
    expect(
      formatValue([
        { claim: 'data', mountPath: '/mnt/data' },
        { claim: 'logs', mountPath: '/mnt/logs', subPath: 'a', readOnly: true }
      ])
    ).toBe('data:/mnt/data\nlogs:/mnt/logs (a) ro');
    expect(
      formatValue([
        { key: 'gpu', operator: 'Equal', value: 'a100', effect: 'NoSchedule' }
      ])
    ).toBe('gpu=a100:NoSchedule');
    expect(formatValue(null)).toBe('—');
    expect(
      parameterCells('pvc', [[{ claim: 'd', mountPath: '/d' }], null])
    ).toEqual(['d:/d', '—']);
    expect(
      parameterCells('args', [
        ['--lr', '1'],
        ['--lr', '2']
      ])
    ).toEqual(['… 1', '… 2']);
  });
});

describe('RunSection', () => {
  function section(run: IRunRecord | Error) {
    const client = {
      run: jest.fn(() =>
        run instanceof Error ? Promise.reject(run) : Promise.resolve(run)
      )
    } as unknown as PyTorchJobClient;
    const commands = new CommandRegistry();
    const executed: any[] = [];
    commands.addCommand(CommandIDs.cloneJob, {
      execute: args => {
        executed.push(args);
      }
    });
    const widget = ReactWidget.create(
      <RunSection
        client={client}
        commands={commands}
        name="train"
        state="Succeeded"
        running={false}
        trans={trans}
      />
    );
    Widget.attach(widget, document.body);
    return { widget, client, executed };
  }

  it('shows the hparams, the checkpoints newest first and the artifacts', async () => {
    const { widget, client, executed } = section(RUN);
    await settled(widget);
    expect(client.run).toHaveBeenCalledWith('train');
    const node = widget.node;
    const hparams = Array.from(node.querySelectorAll('[data-hparam]')).map(
      row => row.textContent
    );
    expect(hparams).toEqual(['lr0.001', 'optim.nameadam', 'layers[64,64]']);
    const rows = Array.from(node.querySelectorAll('[data-checkpoint]'));
    expect(rows.map(row => row.getAttribute('data-checkpoint'))).toEqual([
      '/mnt/ws/run/ckpt-200',
      '/mnt/ws/run/ckpt-100'
    ]);
    expect(rows[0].textContent).toContain('loss 0.2');
    expect(
      node.querySelector('[data-artifact="model"]')!.textContent
    ).toContain('/mnt/ws/run/model.onnx');
    expect(node.querySelector('.jp-PyTorchJobRun-dropped')!.textContent).toBe(
      '2 reported items were left out (over a limit, or not valid).'
    );

    const copy = jest.spyOn(Clipboard, 'copyToSystem').mockImplementation();
    const buttons = rows[1].querySelectorAll('button');
    (buttons[0] as HTMLButtonElement).click();
    expect(copy).toHaveBeenCalledWith('/mnt/ws/run/ckpt-100');
    await settled(widget);
    expect(rows[1].querySelector('button')!.textContent).toBe('Copied');
    (buttons[1] as HTMLButtonElement).click();
    expect(executed).toEqual([
      { name: 'train', resumeFrom: '/mnt/ws/run/ckpt-100' }
    ]);
    copy.mockRestore();
    widget.dispose();
  });

  it('says what to call when nothing was reported, and why it cannot load', async () => {
    const empty: IRunRecord = {
      ...RUN,
      hparams: {},
      checkpoints: [],
      artifacts: [],
      dropped: 0
    };
    const { widget } = section(empty);
    await settled(widget);
    expect(
      widget.node.querySelector('.jp-PyTorchJobRun-empty')!.textContent
    ).toMatch(/^Nothing reported yet: call report\(hparams=/);
    widget.dispose();
    const failing = section(new Error('no job train'));
    await settled(failing.widget);
    expect(
      failing.widget.node.querySelector('[role="alert"]')!.textContent
    ).toBe('no job train');
    failing.widget.dispose();
  });
});

describe('ComparisonView by what the runs were', () => {
  const COMPARISON: IComparison = {
    jobs: [
      { name: 'a', state: 'Succeeded', duration: 60, logdir: '/runs/a' },
      { name: 'b', state: 'Succeeded', duration: 120, logdir: null }
    ],
    hparams: [{ name: 'lr', values: [0.1, 0.01] }],
    parameters: [
      {
        field: 'command',
        values: [
          ['python', 'train.py', '--seed', '1'],
          ['python', 'train.py', '--seed', '2']
        ]
      },
      {
        field: 'pvc',
        values: [[{ claim: 'ws', mountPath: '/mnt/ws' }], null]
      }
    ],
    metrics: [
      {
        name: 'lr',
        values: [0.1, 0.01],
        lowerIsBetter: false,
        scored: false,
        best: null
      },
      {
        name: 'loss',
        values: [0.5, 0.2],
        lowerIsBetter: true,
        scored: true,
        best: 1
      }
    ]
  };

  it('puts reported hparams first and marks no best for them', async () => {
    const view = new ComparisonView({
      names: ['a', 'b'],
      load: () => Promise.resolve(COMPARISON),
      trans,
      openTensorBoard: () => undefined
    });
    Widget.attach(view, document.body);
    await view.refresh();
    await settled(view);
    const rows = Array.from(view.node.querySelectorAll('tbody tr'));
    const firstData = rows.find(row => row.hasAttribute('data-hparam'))!;
    const firstField = rows.find(row => row.hasAttribute('data-parameter'))!;
    expect(rows.indexOf(firstData)).toBeLessThan(rows.indexOf(firstField));
    const cells = (selector: string) =>
      Array.from(view.node.querySelectorAll(`${selector} td`)).map(
        td => td.textContent
      );
    expect(cells('[data-hparam="lr"]')).toEqual(['0.1', '0.01']);
    expect(cells('[data-parameter="command"]')).toEqual(['… 1', '… 2']);
    expect(cells('[data-parameter="pvc"]')).toEqual(['ws:/mnt/ws', '—']);
    const lr = view.node.querySelector('[data-metric="lr"]')!;
    expect(lr.querySelector('th')!.textContent).toBe('lr'); // no arrow
    expect(lr.querySelectorAll('td.jp-mod-best')).toHaveLength(0);
    expect(
      view.node.querySelectorAll('[data-metric="loss"] td.jp-mod-best')
    ).toHaveLength(1);
    expect(
      view.node.querySelector('.jp-PyTorchJobCompare-leftout')!.textContent
    ).toBe('Compare in TensorBoard leaves out b: it has no log directory.');
    view.dispose();
  });
});

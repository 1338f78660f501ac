/**
 * Icons of the extension.
 *
 * @packageDocumentation
 */

import { LabIcon } from '@jupyterlab/ui-components';

import clockSvgstr from '../style/icons/clock.svg';
import pytorchSvgstr from '../style/icons/pytorch.svg';
import wrapSvgstr from '../style/icons/wrap.svg';

/**
 * The PyTorch flame, used for the side panel's tab.
 */
export const pytorchIcon = new LabIcon({
  name: 'jupyter-pytorchjob:pytorch',
  svgstr: pytorchSvgstr
});

/**
 * Lines that wrap (the log viewer's *Wrap lines* toggle).
 */
export const wrapIcon = new LabIcon({
  name: 'jupyter-pytorchjob:wrap',
  svgstr: wrapSvgstr
});

/**
 * A clock (the log viewer's *Timestamps* toggle).
 */
export const clockIcon = new LabIcon({
  name: 'jupyter-pytorchjob:clock',
  svgstr: clockSvgstr
});

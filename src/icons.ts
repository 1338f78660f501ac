/**
 * Icons of the extension.
 *
 * @packageDocumentation
 */

import { LabIcon } from '@jupyterlab/ui-components';

import pytorchSvgstr from '../style/icons/pytorch.svg';

/**
 * The PyTorch flame, used for the side panel's tab.
 */
export const pytorchIcon = new LabIcon({
  name: 'jupyter-pytorchjob:pytorch',
  svgstr: pytorchSvgstr
});

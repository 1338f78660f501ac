/**
 * Where a new form starts from: the defaults of the server's configuration
 * under the user's settings, and the body that runs a Python file.
 *
 * @packageDocumentation
 */

import { PathExt } from '@jupyterlab/coreutils';

import { IPluginSettings } from '../settings';
import { IConfig, IJobBody } from '../tokens';
import { IFormDefaults } from './state';

/**
 * The form defaults from the server's configuration and the user's settings.
 */
export function formDefaults(
  config: IConfig,
  settings: IPluginSettings
): IFormDefaults {
  const shmSetting = settings.defaultShm.trim();
  const shm =
    shmSetting === ''
      ? config.defaults.shm
      : shmSetting === '0' || shmSetting.toLowerCase() === 'off'
        ? ''
        : shmSetting;
  return {
    image: settings.defaultImage.trim() || config.defaults.image,
    shm: shm ?? '',
    gpuResource: config.defaults.gpuResource,
    pvc: config.defaults.pvc ?? [],
    workdir: config.defaults.workdir ?? null,
    fields: config.fields,
    kinds: config.kinds
  };
}

/**
 * The job body that runs a Python file of the server's contents.
 *
 * @param path - The file, relative to the server root (`dir/train.py`).
 * @param root - The server root's absolute path, if known.
 */
export function bodyForFile(path: string, root: string | null): IJobBody {
  const dir = PathExt.dirname(path);
  const base = PathExt.basename(path);
  if (root && root.startsWith('/')) {
    const workdir = dir ? `${root.replace(/\/+$/, '')}/${dir}` : root;
    return { command: ['python', base], workdir };
  }
  // The server starts jobs in its root directory by default.
  return { command: ['python', path] };
}

/**
 * The zh_CN catalogue, and JupyterLab's translator reading it.
 */

import { Gettext } from '@jupyterlab/translation';
import * as fs from 'fs';
import * as path from 'path';

/**
 * The catalogue JupyterLab reads (Jed JSON, compiled from the .po beside it).
 */
export const CATALOGUE = path.resolve(
  __dirname,
  '../../jupyter_pytorchjob/locale/zh_CN/LC_MESSAGES/jupyter_pytorchjob.json'
);

/**
 * The catalogue's entries by msgid.
 */
export function readCatalogue(): Record<string, any> {
  return JSON.parse(fs.readFileSync(CATALOGUE, 'utf-8'));
}

/**
 * JupyterLab's translator in zh_CN with our catalogue, loaded as
 * TranslationManager.load() does with the server's data.
 */
export function chineseTranslator(): Gettext {
  const catalogue = readCatalogue();
  const gettext = new Gettext({
    domain: 'jupyter_pytorchjob',
    locale: 'zh_CN'
  });
  gettext.loadJSON(
    {
      ...catalogue,
      '': { ...catalogue[''], pluralForms: catalogue[''].plural_forms }
    },
    'jupyter_pytorchjob'
  );
  gettext.setLocale('zh_CN');
  return gettext;
}

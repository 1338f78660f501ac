/**
 * The zh_CN catalogue covers every string of the UI and of the settings, with
 * the same placeholders, and JupyterLab's translator reads it.
 */

import * as fs from 'fs';
import * as path from 'path';

import { SERVER_MESSAGES } from '../servermessages';
import { chineseTranslator, readCatalogue } from './chinese';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * The literal strings of `trans.__(…)` and `trans._n(…)` in the sources:
 * what `jupyterlab-translate extract` finds.
 */
function extract(): Map<string, string | null> {
  const literal = `'(?:[^'\\\\]|\\\\.)*'|"(?:[^"\\\\]|\\\\.)*"`;
  const call = new RegExp(
    `trans\\.(__|_n)\\(\\s*(${literal})(?:\\s*,\\s*(${literal}))?`,
    'g'
  );
  const unquote = (text: string): string =>
    text[0] === "'"
      ? JSON.parse(
          '"' +
            text.slice(1, -1).replace(/\\'/g, "'").replace(/"/g, '\\"') +
            '"'
        )
      : JSON.parse(text);
  const found = new Map<string, string | null>();
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== '__tests__') {
          walk(file);
        }
      } else if (/\.tsx?$/.test(entry.name)) {
        const source = fs.readFileSync(file, 'utf-8');
        for (const match of source.matchAll(call)) {
          const plural =
            match[1] === '_n' && match[3] ? unquote(match[3]) : null;
          found.set(unquote(match[2]), plural);
        }
      }
    }
  };
  walk(path.join(ROOT, 'src'));
  // The labels and hints the server declares with its fields (GET config's
  // `fields`); the form translates them.
  const fields = JSON.parse(
    fs.readFileSync(path.join(__dirname, 'fields.json'), 'utf-8')
  );
  for (const info of Object.values<any>(fields)) {
    for (const text of [info.label, info.hint]) {
      if (text) {
        found.set(text, null);
      }
    }
  }
  // The templates of the server's messages (job/messages.py): the frontend
  // translates them by code.
  for (const template of Object.values(SERVER_MESSAGES)) {
    found.set(template, null);
  }
  const schema = JSON.parse(
    fs.readFileSync(path.join(ROOT, 'schema/plugin.json'), 'utf-8')
  );
  found.set(schema.title, null);
  found.set(schema.description, null);
  for (const property of Object.values<any>(schema.properties)) {
    found.set(property.title, null);
    found.set(property.description, null);
  }
  return found;
}

describe('the zh_CN catalogue', () => {
  const catalogue = readCatalogue();
  const strings = extract();

  it('is a Jed catalogue of the jupyter_pytorchjob domain', () => {
    expect(catalogue['']).toMatchObject({
      domain: 'jupyter_pytorchjob',
      language: 'zh-CN',
      plural_forms: 'nplurals=1; plural=0;'
    });
  });

  it('finds the strings of the UI', () => {
    expect(strings.size).toBeGreaterThan(150);
    expect(strings.has('New job')).toBe(true);
    expect(strings.get('%1 line')).toBe('%1 lines');
    expect(strings.has('Refresh interval (seconds)')).toBe(true);
    expect(strings.has(SERVER_MESSAGES.whole_number)).toBe(true);
  });

  it('translates every string', () => {
    const missing = [...strings.keys()].filter(
      key => !Array.isArray(catalogue[key]) || !catalogue[key][0]
    );
    expect(missing).toEqual([]);
  });

  it('has no stale entries', () => {
    const stale = Object.keys(catalogue).filter(
      key => key !== '' && !strings.has(key)
    );
    expect(stale).toEqual([]);
  });

  it('keeps the placeholders of every string', () => {
    // gettext's %1 and the server's named {parameters} ({{ is a brace).
    const placeholders = (text: string) =>
      (text.replace(/\{\{|\}\}/g, '').match(/%\d|\{\w+\}/g) ?? [])
        .sort()
        .join(',');
    const wrong = [...strings.keys()].filter(
      key =>
        catalogue[key] && placeholders(key) !== placeholders(catalogue[key][0])
    );
    expect(wrong).toEqual([]);
  });

  it("is read by JupyterLab's translator, plurals included", () => {
    const gettext = chineseTranslator();
    expect(gettext.gettext('New job')).toBe('新建作业');
    expect(gettext.ngettext('%1 line', '%1 lines', 3)).toBe('3 行');
    expect(
      gettext.ngettext(
        '%2 nodes = 1 master + %1 worker',
        '%2 nodes = 1 master + %1 workers',
        2,
        3
      )
    ).toBe('3 个节点 = 1 个 master + 2 个 worker');
  });
});

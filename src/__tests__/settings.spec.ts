import * as fs from 'fs';
import * as path from 'path';

import { DEFAULT_SETTINGS, readSettings } from '../settings';

const SCHEMA = JSON.parse(
  fs.readFileSync(
    path.resolve(__dirname, '..', '..', 'schema', 'plugin.json'),
    'utf-8'
  )
);

describe('the settings', () => {
  it('default as the schema says, for every setting of the schema', () => {
    const defaults = Object.fromEntries(
      Object.entries<any>(SCHEMA.properties).map(([key, property]) => [
        key,
        property.default
      ])
    );
    expect(DEFAULT_SETTINGS).toEqual(defaults);
  });

  it('fall back to the defaults for missing values', () => {
    expect(readSettings({})).toEqual(DEFAULT_SETTINGS);
    expect(readSettings({ refreshInterval: null } as any)).toEqual(
      DEFAULT_SETTINGS
    );
  });

  it('keep the user values, false and 0 included, as their types', () => {
    expect(
      readSettings({
        refreshInterval: 30,
        notifications: false,
        defaultShm: 'off',
        defaultImage: 'me/torch:1',
        tensorBoardRefreshInterval: 0
      })
    ).toEqual({
      refreshInterval: 30,
      notifications: false,
      defaultShm: 'off',
      defaultImage: 'me/torch:1',
      tensorBoardRefreshInterval: 0
    });
    expect(readSettings({ refreshInterval: '7', defaultShm: 8 })).toEqual({
      ...DEFAULT_SETTINGS,
      refreshInterval: 7,
      defaultShm: '8'
    });
  });

  it('ignore what the schema does not know', () => {
    expect(readSettings({ other: 1 })).toEqual(DEFAULT_SETTINGS);
  });
});

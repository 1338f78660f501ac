/**
 * What the TensorBoard tab does with TensorBoard's own page.
 *
 * TensorBoard is served through the Jupyter server's proxy, on the page's own
 * origin, so the tab can read TensorBoard's settings and press its reload button.
 *
 * @packageDocumentation
 */

/**
 * The `localStorage` key of TensorBoard's (2.x) global settings.
 */
export const TENSORBOARD_SETTINGS_KEY = '_tb_global_settings';

/**
 * Turn TensorBoard's own "Reload data" setting on, unless the user chose.
 *
 * TensorBoard ships with automatic reloading off: a chart would then never
 * show a new step by itself. The setting is only written when it was never
 * set, so a user who turns reloading off in TensorBoard keeps it off.
 *
 * @returns Whether the setting was written.
 */
export function enableAutoReload(storage: Storage): boolean {
  let settings: Record<string, unknown> = {};
  try {
    const raw = storage.getItem(TENSORBOARD_SETTINGS_KEY);
    const parsed: unknown = raw ? JSON.parse(raw) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      settings = parsed as Record<string, unknown>;
    }
  } catch {
    // Unreadable settings: TensorBoard itself would ignore them too.
  }
  if (typeof settings['autoReload'] === 'boolean') {
    return false;
  }
  try {
    storage.setItem(
      TENSORBOARD_SETTINGS_KEY,
      JSON.stringify({ ...settings, autoReload: true })
    );
  } catch {
    return false; // storage full or denied: TensorBoard's default stays
  }
  return true;
}

/**
 * The selector of TensorBoard's (2.x) "Reload" button in its top bar.
 */
export const RELOAD_BUTTON_SELECTOR = 'app-header-reload button.reload-button';

/**
 * Press TensorBoard's own reload button: new runs, tags and steps are fetched
 * while the page keeps its state (selected runs, smoothing, scroll).
 *
 * @returns Whether the button was there (false when the page is not loaded
 * yet, is loading already, or is not a TensorBoard 2.x page).
 */
export function reloadData(doc: Document | null | undefined): boolean {
  const button = doc?.querySelector<HTMLButtonElement>(RELOAD_BUTTON_SELECTOR);
  if (!button) {
    return false;
  }
  if (!button.disabled) {
    button.click();
  }
  return true;
}

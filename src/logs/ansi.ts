/**
 * ANSI escape sequences in log lines: stripped for search and plain text,
 * rendered as colours with JupyterLab's own ANSI handling (rendermime's
 * `renderText`, the one notebook outputs use: same classes, same theme
 * colours, sanitized), after making hostile input cheap and harmless.
 *
 * @packageDocumentation
 */

import { Sanitizer } from '@jupyterlab/apputils';
import { renderText } from '@jupyterlab/rendermime';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

/**
 * Every escape sequence: CSI (ECMA-48: parameters, intermediates, final byte),
 * OSC (to BEL or ST), any other two-byte escape, else a lone ESC. Each
 * alternative's classes exclude ESC, so one pass is linear in the line.
 */
const ESCAPE =
  // eslint-disable-next-line no-control-regex
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]|)/g;

/**
 * A colour sequence (SGR) rendermime understands: numbers and `;` only.
 */
// eslint-disable-next-line no-control-regex
const SGR = /^\x1b\[[0-9;]{0,48}m$/;

/**
 * Colour sequences in one line past which it is shown without colours: each
 * makes a span, and a row must stay cheap whatever a program prints.
 */
export const MAX_SGR_PER_LINE = 256;

/**
 * Whether `text` holds an escape sequence.
 */
export function hasEscapes(text: string): boolean {
  return text.indexOf('\x1b') !== -1;
}

/**
 * `text` without any escape sequence (what search matches and a plain
 * download holds).
 */
export function stripAnsi(text: string): string {
  return hasEscapes(text) ? text.replace(ESCAPE, '') : text;
}

/**
 * `text` with only its colour sequences (at most `MAX_SGR_PER_LINE`, else
 * none), every other escape removed: what the renderer gets, so that no
 * sequence can make it scan far or emit anything but coloured spans.
 */
export function colourOnly(text: string): string {
  let kept = 0;
  const safe = text.replace(ESCAPE, sequence => {
    if (SGR.test(sequence)) {
      kept++;
      return sequence;
    }
    return '';
  });
  return kept > MAX_SGR_PER_LINE ? stripAnsi(safe) : safe;
}

/**
 * rendermime's sanitizer, with autolinking off: a row is one line of text,
 * and plain rows are not linked either.
 */
class RowSanitizer implements IRenderMime.ISanitizer {
  sanitize(dirty: string, options?: IRenderMime.ISanitizerOptions): string {
    return this._sanitizer.sanitize(dirty, options);
  }

  getAutolink(): boolean {
    return false;
  }

  private _sanitizer = new Sanitizer();
}

let sanitizer: RowSanitizer | null = null;

/**
 * Render a line with its colours into `host` (replacing its content): the
 * text inside a `<pre>` in a `jp-RenderedText` host, as JupyterLab renders
 * a stream output, so its ANSI stylesheet applies.
 */
export function renderColoured(host: HTMLElement, text: string): void {
  host.textContent = '';
  sanitizer ??= new RowSanitizer();
  // renderText renders synchronously; its promise only reports completion.
  void renderText({ host, sanitizer, source: colourOnly(text) });
}

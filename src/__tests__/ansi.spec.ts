/**
 * Tests of ANSI handling: stripping for search, what reaches the renderer,
 * and the colours JupyterLab's renderer makes of it.
 */

import {
  colourOnly,
  MAX_SGR_PER_LINE,
  renderColoured,
  stripAnsi
} from '../logs/ansi';

describe('stripAnsi', () => {
  it('removes colours, cursor moves, titles, links and stray escapes', () => {
    expect(stripAnsi('\x1b[1;31mred\x1b[0m \x1b[38;5;208mo\x1b[m')).toBe(
      'red o'
    );
    expect(stripAnsi('\x1b[2K\x1b[1Gbar\x1b[?25l')).toBe('bar');
    expect(
      stripAnsi('\x1b]0;title\x07x\x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\')
    ).toBe('xlink');
    expect(stripAnsi('a\x1bb\x1b')).toBe('ab');
    expect(stripAnsi('plain')).toBe('plain');
  });

  it('takes one pass over hostile input', () => {
    // unterminated sequences of every kind, 16 KiB of them
    const hostile = '\x1b[1;2;3'.repeat(2048) + '\x1b]' + 'x'.repeat(100);
    const out = stripAnsi(hostile);
    expect(out.indexOf('\x1b')).toBe(-1);
  });
});

describe('colourOnly', () => {
  it('keeps colour sequences only', () => {
    expect(colourOnly('\x1b[2K\x1b[31mred\x1b]0;t\x07\x1b[0m')).toBe(
      '\x1b[31mred\x1b[0m'
    );
    // the colon form rendermime does not read
    expect(colourOnly('\x1b[38:2::1:2:3mx')).toBe('x');
  });

  it('drops every colour of a line with too many', () => {
    const many = '\x1b[31mx'.repeat(MAX_SGR_PER_LINE + 1);
    expect(colourOnly(many)).toBe('x'.repeat(MAX_SGR_PER_LINE + 1));
  });
});

describe('renderColoured', () => {
  it('renders 16, 256 and true colours and bold with rendermime’s classes', () => {
    const host = document.createElement('span');
    renderColoured(
      host,
      '\x1b[31mred\x1b[0m \x1b[1;31mbold red\x1b[0m \x1b[92mbright\x1b[0m ' +
        '\x1b[38;5;208morange\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[0m end'
    );
    const pre = host.querySelector('pre')!;
    expect(pre.textContent).toBe('red bold red bright orange rgb end');
    const classes = (text: string) =>
      Array.from(pre.querySelectorAll('span')).find(
        span => span.textContent === text
      )!.className;
    expect(classes('red')).toBe('ansi-red-fg');
    // bold brightens, as in a notebook's output (nbconvert's rule)
    expect(classes('bold red')).toBe('ansi-red-intense-fg ansi-bold');
    const bright = Array.from(pre.querySelectorAll('span')).find(
      span => span.textContent === 'bright'
    )!;
    expect(bright.className).toContain('ansi-green-intense-fg');
    const styled = (text: string) =>
      Array.from(pre.querySelectorAll('span')).find(
        span => span.textContent === text
      )!.style.color;
    expect(styled('orange')).toBe('rgb(255, 135, 0)');
    expect(styled('rgb')).toBe('rgb(1, 2, 3)');
  });

  it('renders markup as text and replaces what was there', () => {
    const host = document.createElement('span');
    host.textContent = 'old';
    renderColoured(
      host,
      '\x1b[31m<img src=x onerror="alert(1)"><script>x()</script>\x1b[0m'
    );
    expect(host.querySelector('img, script')).toBeNull();
    expect(host.textContent).toBe(
      '<img src=x onerror="alert(1)"><script>x()</script>'
    );
  });
});

/**
 * Tests of the virtualised log view: only the visible rows are in the DOM.
 */

import { Widget } from '@lumino/widgets';

import { LogBuffer } from '../logs/buffer';
import { LINE_HEIGHT, LogLines, MAX_SCROLL_HEIGHT } from '../logs/lines';

function fill(buffer: LogBuffer, count: number, replicas = ['master-0']) {
  const per = 1000;
  for (let start = 0; start < count; start += per) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(count, start + per); i++) {
      lines.push(`line ${i}`);
    }
    const replica = replicas[(start / per) % replicas.length];
    buffer.append({ replica, text: lines.join('\n') + '\n', offset: start });
  }
}

function attach(lines: LogLines, height = 180): void {
  Object.defineProperty(lines.node, 'clientHeight', {
    configurable: true,
    get: () => height
  });
  Widget.attach(lines, document.body);
}

function rowTexts(lines: LogLines): string[] {
  return Array.from(
    lines.node.querySelectorAll('.jp-PyTorchJobLogs-row'),
    row => row.textContent ?? ''
  );
}

describe('LogLines', () => {
  let lines: LogLines;
  let buffer: LogBuffer;

  beforeEach(() => {
    buffer = new LogBuffer();
    lines = new LogLines({ buffer, label: 'Log' });
  });

  afterEach(() => {
    lines.dispose();
  });

  it('is a labelled, focusable log', () => {
    expect(lines.node.getAttribute('role')).toBe('log');
    expect(lines.node.getAttribute('aria-label')).toBe('Log');
    expect(lines.node.tabIndex).toBe(0);
  });

  it('renders only the visible rows of a million lines', () => {
    fill(buffer, 1_000_000);
    attach(lines);
    lines.follow = false;
    lines.render();
    expect(lines.lineCount).toBe(1_000_000);
    // 180 px / 18 px = 10 rows, plus one partly shown.
    expect(lines.renderedRows).toBe(11);
    expect(rowTexts(lines)[0]).toBe('master-0 | line 0');
    const sizer = lines.node.querySelector<HTMLElement>(
      '.jp-PyTorchJobLogs-sizer'
    )!;
    expect(sizer.style.height).toBe(`${MAX_SCROLL_HEIGHT}px`);
  });

  it('renders again when its height changes without a Lumino resize', () => {
    // Its height comes from CSS (flex under the viewer's header), so the
    // browser may grow it after a render with no resize message: the view
    // must notice (a Galata run once showed 3 of 5 lines for good).
    const observers: Array<() => void> = [];
    const original = (globalThis as any).ResizeObserver;
    (globalThis as any).ResizeObserver = class {
      constructor(callback: () => void) {
        observers.push(callback);
      }
      observe(): void {
        // the test calls the callback itself
      }
      disconnect(): void {
        observers.length = 0;
      }
    };
    const frames: FrameRequestCallback[] = [];
    const raf = jest
      .spyOn(window, 'requestAnimationFrame')
      .mockImplementation(callback => {
        frames.push(callback);
        return frames.length;
      });
    try {
      const grown = new LogLines({ buffer, label: 'Log' });
      fill(buffer, 5, ['master-0']);
      let height = LINE_HEIGHT;
      Object.defineProperty(grown.node, 'clientHeight', {
        configurable: true,
        get: () => height
      });
      Widget.attach(grown, document.body);
      grown.follow = false;
      grown.render();
      expect(grown.renderedRows).toBe(2);
      height = 10 * LINE_HEIGHT;
      expect(observers).toHaveLength(1);
      observers[0]();
      frames.splice(0).forEach(frame => frame(0));
      expect(grown.renderedRows).toBe(5);
      grown.dispose();
      expect(observers).toHaveLength(0);
    } finally {
      raf.mockRestore();
      (globalThis as any).ResizeObserver = original;
    }
  });

  it('maps the scroll position to lines, also past the height limit', () => {
    fill(buffer, 1_000_000);
    attach(lines);
    lines.follow = false;
    // Scrolled to the end: the last lines show.
    lines.node.scrollTop = MAX_SCROLL_HEIGHT - 180;
    lines.render();
    const texts = rowTexts(lines);
    expect(texts[texts.length - 1]).toBe('master-0 | line 999999');
    // Half-way.
    lines.node.scrollTop = (MAX_SCROLL_HEIGHT - 180) / 2;
    lines.render();
    const middle = Number(rowTexts(lines)[0].split(' ').pop());
    expect(Math.abs(middle - 500_000)).toBeLessThan(10);
  });

  it('scrolls one row per line when small', () => {
    fill(buffer, 100);
    attach(lines);
    lines.follow = false;
    lines.node.scrollTop = 20 * LINE_HEIGHT;
    lines.render();
    expect(rowTexts(lines)[0]).toBe('master-0 | line 20');
  });

  it('follows the end as lines arrive', () => {
    fill(buffer, 50);
    attach(lines);
    expect(lines.follow).toBe(true);
    lines.render();
    fill(buffer, 10);
    lines.render();
    expect(lines.node.scrollTop).toBe(60 * LINE_HEIGHT - 180);
  });

  it('shows one replica without prefixes', () => {
    fill(buffer, 4000, ['master-0', 'worker-0']);
    attach(lines);
    lines.follow = false;
    lines.replica = 'worker-0';
    lines.render();
    expect(lines.lineCount).toBe(2000);
    expect(rowTexts(lines)[0]).toBe('line 1000');
  });

  it('highlights matches and steps through them', () => {
    fill(buffer, 30);
    attach(lines);
    const changed = jest.fn();
    lines.matchesChanged.connect(changed);
    lines.setQuery('line 2');
    lines.render();
    // line 2, line 20 … line 29
    expect(lines.matches.length).toBe(11);
    expect(lines.currentMatch).toBe(0);
    expect(lines.follow).toBe(false);
    const marks = lines.node.querySelectorAll('mark.jp-PyTorchJobLogs-match');
    expect(marks.length).toBeGreaterThan(0);
    expect(marks[0].textContent).toBe('line 2');
    lines.step(-1);
    expect(lines.currentMatch).toBe(10);
    lines.step(1);
    expect(lines.currentMatch).toBe(0);
    expect(changed).toHaveBeenCalled();
  });

  it('shows only the matching lines, with their count, stepping through them', () => {
    fill(buffer, 1_000_000);
    attach(lines);
    lines.setQuery('line 99999');
    // line 99999, 999990 … 999999
    expect(lines.matches.length).toBe(11);
    lines.onlyMatching = true;
    lines.render();
    expect(lines.lineCount).toBe(1_000_000);
    expect(lines.shownCount).toBe(11);
    // Still virtualised: 11 rows, the matching lines alone.
    expect(lines.renderedRows).toBe(11);
    expect(rowTexts(lines)).toEqual([
      'master-0 | line 99999',
      ...Array.from({ length: 10 }, (_, i) => `master-0 | line 99999${i}`)
    ]);
    // The current match is marked where it is shown; steps move it there.
    const current = () =>
      lines.node.querySelector('.jp-PyTorchJobLogs-row.jp-mod-current')
        ?.textContent;
    expect(current()).toBe('master-0 | line 99999');
    lines.step(-1);
    lines.render();
    expect(lines.currentMatch).toBe(10);
    expect(current()).toBe('master-0 | line 999999');
    // A new matching line joins them; another line does not.
    buffer.append({
      replica: 'master-0',
      text: 'line 99999 again\nother\n',
      offset: 2_000_000
    });
    lines.refresh();
    lines.render();
    expect(lines.shownCount).toBe(12);
    // Without a query, or turned off: every line.
    lines.setQuery('');
    expect(lines.shownCount).toBe(1_000_002);
    lines.setQuery('line 99999');
    lines.onlyMatching = false;
    expect(lines.shownCount).toBe(1_000_002);
  });

  it('wraps long lines, still rendering only the rows in view', () => {
    fill(buffer, 1_000_000);
    buffer.append({
      replica: 'master-0',
      text: 'x'.repeat(5000) + '\nthe end\n',
      offset: 2_000_000
    });
    attach(lines);
    lines.render();
    expect(lines.node.classList.contains('jp-mod-wrap')).toBe(false);
    lines.wrap = true;
    lines.render();
    expect(lines.node.classList.contains('jp-mod-wrap')).toBe(true);
    // Following: the end is drawn at the bottom of the view, and the rows
    // in the DOM are those near the view (twice the view at most).
    const texts = rowTexts(lines);
    expect(texts[texts.length - 1]).toBe('master-0 | the end');
    expect(lines.renderedRows).toBeLessThanOrEqual(2 * 11 + 1);
    // The box of rows is the view's height, where the view scrolls.
    const rows = lines.node.querySelector<HTMLElement>(
      '.jp-PyTorchJobLogs-rows'
    )!;
    expect(rows.style.height).toBe('180px');
    // The start: the first line at the top.
    lines.follow = false;
    lines.node.scrollTop = 0;
    lines.render();
    expect(rowTexts(lines)[0]).toBe('master-0 | line 0');
    expect(rows.children[0].getAttribute('style')).toContain('margin-top: 0px');
    // Unwrapped again: rows at 18 px, moved by the scroll position.
    lines.wrap = false;
    lines.render();
    expect(rows.style.height).toBe('');
    expect(lines.renderedRows).toBe(11);
  });

  it('shows each line’s time when asked, blank where it has none', () => {
    buffer.append({ replica: 'master-0', text: 'untimed\n', offset: 1 });
    buffer.append({
      replica: 'master-0',
      text: 'timed\n',
      offset: 2,
      times: [1795321501.123]
    });
    attach(lines);
    lines.render();
    expect(lines.node.querySelector('.jp-PyTorchJobLogs-time')).toBeNull();
    lines.timestamps = true;
    lines.render();
    const times = Array.from(
      lines.node.querySelectorAll<HTMLElement>('.jp-PyTorchJobLogs-time')
    );
    expect(times.map(t => t.textContent)).toEqual([
      ' '.repeat(13),
      expect.stringMatching(/^\d\d:\d\d:01\.123 $/)
    ]);
    expect(times[1].title).toBe(new Date(1795321501123).toLocaleString());
    // A search finds and marks the text, never the time.
    lines.setQuery('01');
    lines.render();
    expect(lines.matches).toEqual([]);
    expect(lines.node.querySelectorAll('mark')).toHaveLength(0);
    lines.setQuery('timed');
    lines.render();
    expect(lines.node.querySelectorAll('mark')).toHaveLength(2);
  });

  it('extends the matches as lines arrive', () => {
    fill(buffer, 10);
    attach(lines);
    lines.setQuery('line 1');
    expect(lines.matches.length).toBe(1);
    buffer.append({ replica: 'master-0', text: 'line 1 again\n', offset: 99 });
    lines.refresh();
    expect(lines.matches.length).toBe(2);
  });

  it('has a current match again once a log read again brings one', () => {
    // The viewer reads the log again (previous container, timestamps).
    fill(buffer, 10);
    attach(lines);
    lines.setQuery('line 1');
    expect(lines.currentMatch).toBe(0);
    buffer.clear();
    lines.refresh();
    expect(lines.currentMatch).toBe(-1);
    fill(buffer, 10);
    lines.refresh();
    expect(lines.matches.length).toBe(1);
    expect(lines.currentMatch).toBe(0);
  });

  it('redraws a progress bar’s row in place', () => {
    buffer.append({ replica: 'master-0', text: 'a\n  0%|\n', offset: 1 });
    attach(lines);
    lines.render();
    expect(rowTexts(lines)).toEqual(['master-0 | a', 'master-0 |   0%|']);
    buffer.append({ replica: 'master-0', text: '\r 50%|\n', offset: 2 });
    lines.refresh();
    lines.render();
    expect(lines.lineCount).toBe(2);
    expect(rowTexts(lines)).toEqual(['master-0 | a', 'master-0 |  50%|']);
  });

  it('counts a line as a match once a redraw makes it one, and not after', () => {
    buffer.append({ replica: 'master-0', text: 'a\n  0%|\nb\n', offset: 1 });
    buffer.append({ replica: 'worker-0', text: '100%| w\n', offset: 1 });
    attach(lines);
    lines.setQuery('100%');
    expect(lines.matches).toEqual([3]);
    buffer.append({ replica: 'master-0', text: 'c\n 50%|\n', offset: 2 });
    buffer.append({ replica: 'master-0', text: '\r100%|\n', offset: 3 });
    lines.refresh();
    expect(lines.matches).toEqual([3, 5]);
    buffer.append({ replica: 'master-0', text: '\rdone\n', offset: 4 });
    lines.refresh();
    expect(lines.matches).toEqual([3]);
    lines.replica = 'master-0';
    buffer.append({ replica: 'master-0', text: '\r100%|\n', offset: 5 });
    lines.refresh();
    expect(lines.matches).toEqual([4]);
  });

  it('shows colours and marks matches across them', () => {
    buffer.append({
      replica: 'master-0',
      text: 'epoch \x1b[32m1 loss\x1b[0m 0.5\n',
      offset: 1
    });
    attach(lines);
    lines.setQuery('1 loss 0');
    lines.render();
    const row = lines.node.querySelector('.jp-PyTorchJobLogs-row')!;
    expect(row.textContent).toBe('master-0 | epoch 1 loss 0.5');
    expect(row.querySelector('.ansi-green-fg')).not.toBeNull();
    const marks = Array.from(row.querySelectorAll('mark'), m => m.textContent);
    expect(marks.join('')).toBe('1 loss 0');
    expect(marks.length).toBe(2);
  });

  it('marks problem lines and steps through them', () => {
    const text: string[] = [];
    for (let i = 0; i < 100; i++) {
      text.push(
        i === 20
          ? 'ERROR: disk'
          : i === 60
            ? 'Traceback (most recent call last):'
            : `line ${i}`
      );
    }
    buffer.append({
      replica: 'master-0',
      text: text.join('\n') + '\n',
      offset: 1
    });
    attach(lines);
    lines.follow = false;
    lines.render();
    expect(lines.problemCount).toBe(2);
    expect(lines.stepProblem(1)).toBe(true);
    expect(lines.currentProblem).toBe(20);
    lines.render();
    const current = lines.node.querySelector('.jp-mod-current')!;
    expect(current.textContent).toBe('master-0 | ERROR: disk');
    expect(current.classList.contains('jp-mod-problem')).toBe(true);
    expect(current.classList.contains('jp-mod-traceback')).toBe(false);
    lines.stepProblem(1);
    expect(lines.currentProblem).toBe(60);
    lines.render();
    expect(
      lines.node
        .querySelector('.jp-mod-current')!
        .classList.contains('jp-mod-traceback')
    ).toBe(true);
    lines.stepProblem(1);
    expect(lines.currentProblem).toBe(20);
    lines.stepProblem(-1);
    expect(lines.currentProblem).toBe(60);
  });

  it('opens at the first traceback, before an earlier error line', () => {
    buffer.append({
      replica: 'master-0',
      text: 'ERROR early\nok\nTraceback (most recent call last):\nValueError\n',
      offset: 1
    });
    attach(lines);
    expect(lines.revealFirstProblem()).toBe(true);
    expect(lines.currentProblem).toBe(2);
    expect(lines.follow).toBe(false);
    const empty = new LogLines({ buffer: new LogBuffer() });
    expect(empty.revealFirstProblem()).toBe(false);
    empty.dispose();
  });
});

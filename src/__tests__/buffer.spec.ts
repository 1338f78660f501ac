/**
 * Tests of the log buffer: merge, per-replica views, resume offsets, search.
 */

import { IndexArray, LogBuffer, PROBLEM, TRACEBACK } from '../logs/buffer';

function chunk(replica: string, text: string, offset: number) {
  return { replica, text, offset, previous: false };
}

/**
 * A generator of random merged chunks, the same ones every run (a small
 * linear congruential generator from `seed`).
 */
function randomMerged(seed: number, names: string[], pieces: string[]) {
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  return {
    next,
    /**
     * A merged chunk of 1 to 8 random lines, each replica ending at `offset`.
     */
    chunk(offset: number) {
      const count = 1 + next(8);
      const lines: string[] = [];
      let owners = '';
      for (let k = 0; k < count; k++) {
        lines.push(pieces[next(pieces.length)]);
        owners += String.fromCharCode(48 + next(names.length));
      }
      const offsets: Record<string, number> = {};
      for (const o of owners) {
        offsets[names[o.charCodeAt(0) - 48]] = offset;
      }
      const last = names[owners.charCodeAt(owners.length - 1) - 48];
      const merged = {
        replica: last,
        text: lines.join('\n') + '\n',
        offset,
        replicas: names,
        owners,
        offsets
      };
      return { lines, merged };
    }
  };
}

describe('LogBuffer', () => {
  it('merges replicas in arrival order and keeps each line’s replica', () => {
    const buffer = new LogBuffer();
    expect(buffer.append(chunk('master-0', 'a\nb\n', 4))).toBe(2);
    expect(buffer.append(chunk('worker-0', 'c\n', 2))).toBe(1);
    expect(buffer.append(chunk('master-0', 'd\n', 6))).toBe(1);
    expect(buffer.length).toBe(4);
    expect([0, 1, 2, 3].map(i => buffer.text(i))).toEqual(['a', 'b', 'c', 'd']);
    expect([0, 1, 2, 3].map(i => buffer.replicaOf(i))).toEqual([
      'master-0',
      'master-0',
      'worker-0',
      'master-0'
    ]);
    expect(buffer.replicas).toEqual(['master-0', 'worker-0']);
  });

  it('takes a merged chunk as the same lines in runs of one replica', () => {
    const names = ['master-0', 'worker-0', 'worker-1'];
    const pieces = ['a', 'b c', '\rbar', 'Error: x', '\x1b[1mbold', ''];
    const random = randomMerged(7, names, pieces);
    for (let round = 0; round < 100; round++) {
      const merged = new LogBuffer();
      const byRun = new LogBuffer();
      for (let c = 0; c < 4; c++) {
        const { lines, merged: one } = random.chunk(10 * round + c);
        const { owners, offsets } = one;
        const count = lines.length;
        merged.append(one);
        for (let k = 0; k < count;) {
          let end = k + 1;
          while (end < count && owners[end] === owners[k]) {
            end++;
          }
          const name = names[owners.charCodeAt(k) - 48];
          const text = lines.slice(k, end).join('\n') + '\n';
          byRun.append(chunk(name, text, offsets[name]));
          k = end;
        }
      }
      const all = (buffer: LogBuffer) =>
        Array.from({ length: buffer.length }, (_, i) => [
          buffer.text(i),
          buffer.replicaOf(i),
          buffer.flags(i)
        ]);
      expect(all(merged)).toEqual(all(byRun));
      expect(merged.offsets).toEqual(byRun.offsets);
      for (const name of names) {
        expect(merged.toText(merged.view(name), false)).toEqual(
          byRun.toText(byRun.view(name), false)
        );
      }
      expect(merged.toText(merged.view(null), true, true)).toEqual(
        byRun.toText(byRun.view(null), true, true)
      );
    }
  });

  it('resumes a merged chunk after each of its replicas’ offsets', () => {
    const buffer = new LogBuffer();
    buffer.append(chunk('worker-0', 'w\n', 2));
    buffer.append({
      replica: 'master-0',
      text: 'a\nb\nc\n',
      offset: 9,
      replicas: ['master-0', 'worker-1'],
      owners: '010',
      offsets: { 'master-0': 9, 'worker-1': 5 }
    });
    expect(buffer.offsets).toEqual({
      'master-0': 9,
      'worker-0': 2,
      'worker-1': 5
    });
    expect(buffer.view('worker-1').length).toBe(1);
    expect(buffer.text(buffer.view('worker-1').lineAt(0))).toBe('b');
  });

  it('has a view per replica', () => {
    const buffer = new LogBuffer();
    buffer.append(chunk('master-0', 'a\n', 2));
    buffer.append(chunk('worker-0', 'b\nc\n', 4));
    buffer.append(chunk('master-0', 'd\n', 4));
    const worker = buffer.view('worker-0');
    expect(worker.length).toBe(2);
    expect(
      [worker.lineAt(0), worker.lineAt(1)].map(i => buffer.text(i))
    ).toEqual(['b', 'c']);
    expect(buffer.view('worker-9').length).toBe(0);
  });

  it('keeps views live across appends and clear()', () => {
    const buffer = new LogBuffer();
    const all = buffer.view(null);
    const master = buffer.view('master-0');
    expect(master.length).toBe(0);
    buffer.append(chunk('master-0', 'a\n', 2));
    expect(all.length).toBe(1);
    expect(master.length).toBe(1);
    buffer.clear();
    expect(all.length).toBe(0);
    expect(master.length).toBe(0);
    buffer.append(chunk('master-0', 'x\ny\n', 4));
    expect(master.length).toBe(2);
    expect(buffer.text(master.lineAt(1))).toBe('y');
  });

  it('resumes after the last offset of every replica', () => {
    const buffer = new LogBuffer();
    expect(buffer.offsets).toEqual({});
    buffer.append(chunk('master-0', 'a\n', 2));
    buffer.append(chunk('worker-0', 'b\n', 2));
    buffer.append(chunk('master-0', 'c\n', 4));
    expect(buffer.offsets).toEqual({ 'master-0': 4, 'worker-0': 2 });
    // The copy is the caller's.
    buffer.offsets['master-0'] = 0;
    expect(buffer.offsets['master-0']).toBe(4);
  });

  it('waits for the rest of a line cut by the server', () => {
    const buffer = new LogBuffer();
    expect(buffer.append(chunk('master-0', 'hello wo', 8))).toBe(0);
    expect(buffer.append(chunk('worker-0', 'other\n', 6))).toBe(1);
    expect(buffer.append(chunk('master-0', 'rld\nnext\n', 17))).toBe(2);
    expect(buffer.text(1)).toBe('hello world');
    expect(buffer.text(2)).toBe('next');
  });

  it('keeps ANSI codes, and of an older server’s \\r line the last state', () => {
    const buffer = new LogBuffer();
    buffer.append(
      chunk('master-0', '\x1b[32mgreen\x1b[0m\n10%\r50%\r100%\nwin\r\n', 30)
    );
    expect([0, 1, 2].map(i => buffer.text(i))).toEqual([
      '\x1b[32mgreen\x1b[0m',
      '100%',
      'win'
    ]);
    expect(buffer.plainText(0)).toBe('green');
  });

  it('replaces a replica’s previous line with its redraw, where it stands', () => {
    const buffer = new LogBuffer();
    expect(buffer.append(chunk('master-0', 'start\n  0%|\n', 2))).toBe(2);
    expect(buffer.append(chunk('worker-0', 'w\n', 1))).toBe(1);
    // the contract's "\r  0%|\r 50%|\r100%|\n", split across chunks too
    expect(buffer.append(chunk('master-0', '\r 50%|\n\r10', 4))).toBe(0);
    expect(buffer.append(chunk('master-0', '0%|\n', 5))).toBe(0);
    expect(buffer.length).toBe(3);
    expect([0, 1, 2].map(i => buffer.text(i))).toEqual(['start', '100%|', 'w']);
    expect(buffer.view('master-0').length).toBe(2);
    expect(buffer.append(chunk('master-0', 'done\n', 6))).toBe(1);
    expect(buffer.text(3)).toBe('done');
  });

  it('lists the lines redrawn since it was last asked, up to a limit', () => {
    const buffer = new LogBuffer();
    buffer.append(chunk('master-0', 'a\nb\n', 1));
    buffer.append(chunk('worker-0', 'w\n\rw2\n', 1));
    buffer.append(chunk('master-0', '\rb2\n', 2));
    expect(buffer.takeRedrawn()).toEqual([2, 1]);
    expect(buffer.takeRedrawn()).toEqual([]);
    const many = '\rx\n'.repeat(5000);
    buffer.append(chunk('master-0', many, 3));
    expect(buffer.takeRedrawn()).toBeNull();
    expect(buffer.takeRedrawn()).toEqual([]);
    expect(buffer.view('worker-0').positionOf(2)).toBe(0);
    expect(buffer.view('worker-0').positionOf(1)).toBe(-1);
    expect(buffer.view(null).positionOf(9)).toBe(-1);
  });

  it('shows a redraw with no line before it as a line', () => {
    const buffer = new LogBuffer();
    buffer.append(chunk('master-0', 'a\n', 1));
    expect(buffer.append(chunk('worker-0', '\r 50%|\n', 1))).toBe(1);
    expect(buffer.text(1)).toBe(' 50%|');
    expect(buffer.view('worker-0').length).toBe(1);
  });

  it('searches without the ANSI codes', () => {
    const buffer = new LogBuffer();
    buffer.append(chunk('master-0', '\x1b[31mred\x1b[0m text\nplain 31m\n', 9));
    const all = buffer.view(null);
    expect(buffer.search(all, 'red text')).toEqual([0]);
    expect(buffer.search(all, '31m')).toEqual([1]);
  });

  it('flags tracebacks and lines saying Error or ERROR', () => {
    const buffer = new LogBuffer();
    buffer.append(
      chunk(
        'master-0',
        [
          'Traceback (most recent call last):',
          '  File "train.py", line 3',
          'RuntimeError: boom',
          '\x1b[31mERROR\x1b[0m: rank 1 died',
          'no errors, 0 error(s)',
          'ErrorHandler set up; TERRORS',
          '[rank0]: Traceback (most recent call last):'
        ].join('\n') + '\n',
        9
      )
    );
    expect([0, 1, 2, 3, 4, 5, 6].map(i => buffer.flags(i))).toEqual([
      PROBLEM | TRACEBACK,
      0,
      PROBLEM,
      PROBLEM,
      0,
      0,
      PROBLEM | TRACEBACK
    ]);
    expect(buffer.problemCount(null)).toBe(4);
    expect(buffer.problemCount('master-0')).toBe(4);
    expect(buffer.problemCount('worker-0')).toBe(0);
  });

  it('counts a problem a redraw brings or takes away', () => {
    const buffer = new LogBuffer();
    buffer.append(chunk('master-0', 'ok\n\rValueError: x\n', 1));
    expect(buffer.problemCount('master-0')).toBe(1);
    buffer.append(chunk('master-0', '\rok again\n', 2));
    expect(buffer.problemCount(null)).toBe(0);
    expect(buffer.flags(0)).toBe(0);
  });

  it('finds the next and previous problem in a view, wrapping', () => {
    const buffer = new LogBuffer();
    buffer.append(chunk('master-0', 'a\nKeyError: 1\n', 1));
    buffer.append(chunk('worker-0', 'ERROR x\n', 1));
    buffer.append(
      chunk('master-0', 'b\nTraceback (most recent call last):\n', 2)
    );
    const all = buffer.view(null);
    expect(buffer.nextProblem(all, -1, 1)).toBe(1);
    expect(buffer.nextProblem(all, 1, 1)).toBe(2);
    expect(buffer.nextProblem(all, 4, 1)).toBe(1);
    expect(buffer.nextProblem(all, 1, -1)).toBe(4);
    expect(buffer.nextProblem(all, -1, 1, TRACEBACK)).toBe(4);
    const master = buffer.view('master-0');
    expect(buffer.nextProblem(master, 1, 1)).toBe(3);
    expect(buffer.nextProblem(buffer.view('none'), 0, 1)).toBe(-1);
    buffer.append(chunk('ps-0', 'fine\n', 1));
    expect(buffer.nextProblem(buffer.view('ps-0'), 0, 1)).toBe(-1);
  });

  it('searches a view, case-insensitively unless the query has capitals', () => {
    const buffer = new LogBuffer();
    buffer.append(chunk('master-0', 'Epoch 1\nloss\nepoch 2\n', 10));
    buffer.append(chunk('worker-0', 'epoch 1\n', 8));
    expect(buffer.search(buffer.view(null), 'epoch')).toEqual([0, 2, 3]);
    expect(buffer.search(buffer.view(null), 'Epoch')).toEqual([0]);
    expect(buffer.search(buffer.view('worker-0'), 'epoch')).toEqual([0]);
    expect(buffer.search(buffer.view(null), 'epoch', 3)).toEqual([3]);
    expect(buffer.search(buffer.view(null), '')).toEqual([]);
  });

  it('writes a view as text, with aligned prefixes when merged', () => {
    const buffer = new LogBuffer();
    buffer.append(chunk('master-0', 'a\n', 2));
    buffer.append(chunk('worker-10', 'b\n', 2));
    expect(buffer.toText(buffer.view(null), true)).toBe(
      'master-0  | a\nworker-10 | b\n'
    );
    expect(buffer.toText(buffer.view('worker-10'), false)).toBe('b\n');
    expect(buffer.toText(buffer.view('none'), false)).toBe('');
  });

  it('downloads as shown without colours, or raw as the program wrote it', () => {
    const buffer = new LogBuffer();
    buffer.append(chunk('master-0', '\x1b[1mgo\x1b[0m\n 0%|\n\r50%|\n', 3));
    buffer.append(chunk('worker-0', 'w\n', 1));
    buffer.append(chunk('master-0', '\r99%|\n', 4));
    expect(buffer.toText(buffer.view('master-0'), false)).toBe('go\n99%|\n');
    expect(buffer.toText(buffer.view('master-0'), false, true)).toBe(
      '\x1b[1mgo\x1b[0m\n 0%|\r50%|\r99%|\n'
    );
    // merged: a redraw after another replica's line starts its own line
    expect(buffer.toText(buffer.view(null), true, true)).toBe(
      'master-0 | \x1b[1mgo\x1b[0m\n' +
        'master-0 |  0%|\rmaster-0 | 50%|\n' +
        'worker-0 | w\n' +
        'master-0 | 99%|\n'
    );
    expect(buffer.toText(buffer.view('none'), false, true)).toBe('');
  });

  it('keeps each line’s time when the stream gives them', () => {
    const buffer = new LogBuffer();
    buffer.append({ replica: 'master-0', text: 'before\n', offset: 1 });
    buffer.append({
      replica: 'master-0',
      text: 'one\n  0%|\n\r 50%|\n',
      offset: 2,
      times: [1795321501.123, 1795321502, 1795321503.5]
    });
    buffer.append({
      replica: 'worker-0',
      text: 'w\nno stamp\n',
      offset: 1,
      times: [1795321502.5, null]
    });
    const view = buffer.view(null);
    const texts = Array.from({ length: view.length }, (_, i) => [
      buffer.text(i),
      buffer.time(i)
    ]);
    expect(texts).toEqual([
      ['before', null],
      ['one', 1795321501.123],
      // A redraw's time replaces its line's.
      [' 50%|', 1795321503.5],
      ['w', 1795321502.5],
      ['no stamp', null]
    ]);
    // Downloaded as shown: each line after its time.
    expect(buffer.toText(buffer.view('master-0'), false, false, true)).toBe(
      'before\n2026-11-22T04:25:01.123Z one\n2026-11-22T04:25:03.500Z  50%|\n'
    );
    buffer.clear();
    buffer.append({ replica: 'master-0', text: 'x\n', offset: 1 });
    expect(buffer.time(0)).toBeNull();
  });

  it('keeps each line’s time in a merged chunk, in the owners’ order', () => {
    const buffer = new LogBuffer();
    buffer.append({
      replica: 'worker-0',
      text: 'm1\nw1\n\r w1 redrawn\nm2\n',
      offset: 9,
      replicas: ['master-0', 'worker-0'],
      owners: '0110',
      offsets: { 'master-0': 6, 'worker-0': 9 },
      times: [10.5, 11, 12.25, null]
    });
    const view = buffer.view(null);
    expect(
      Array.from({ length: view.length }, (_, i) => [
        buffer.replicaOf(view.lineAt(i)),
        buffer.text(view.lineAt(i)),
        buffer.time(view.lineAt(i))
      ])
    ).toEqual([
      ['master-0', 'm1', 10.5],
      ['worker-0', ' w1 redrawn', 12.25],
      ['master-0', 'm2', null]
    ]);
  });

  it('holds a million lines', () => {
    const buffer = new LogBuffer();
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++) {
      lines.push(`line ${i}`);
    }
    const text = lines.join('\n') + '\n';
    for (let c = 0; c < 1000; c++) {
      buffer.append(chunk(c % 2 ? 'worker-0' : 'master-0', text, (c + 1) * 10));
    }
    expect(buffer.length).toBe(1_000_000);
    expect(buffer.view('worker-0').length).toBe(500_000);
    expect(buffer.search(buffer.view(null), 'line 999').length).toBe(1000);
  });

  it('holds a million shown lines with a tenth more redraws', () => {
    const buffer = new LogBuffer();
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++) {
      lines.push(`line ${i}`);
      if (i % 10 === 9) {
        lines.push(`\r\x1b[32mline ${i} done\x1b[0m`);
      }
    }
    const text = lines.join('\n') + '\n';
    for (let c = 0; c < 1000; c++) {
      buffer.append(chunk(c % 2 ? 'worker-0' : 'master-0', text, (c + 1) * 10));
    }
    expect(buffer.length).toBe(1_000_000);
    expect(buffer.plainText(9)).toBe('line 9 done');
    expect(buffer.search(buffer.view(null), 'line 999 done').length).toBe(1000);
  });
});

/**
 * Lines as a stamped chunk's text: each after a stamp and one space, an empty
 * line as a stamp alone (no space) when `bare`.
 */
function stamped(lines: string[], bare = true): string {
  return lines
    .map((line, k) => {
      const stamp = `2026-11-27T14:00:${String(k % 60).padStart(2, '0')}.123456789Z`;
      return line === '' && bare ? stamp : `${stamp} ${line}`;
    })
    .map(line => line + '\n')
    .join('');
}

/**
 * Everything a buffer shows: lines, replicas, flags, offsets, views,
 * redraws, search and both downloads.
 */
function shown(buffer: LogBuffer, query: string) {
  const all = buffer.view(null);
  return {
    lines: Array.from({ length: buffer.length }, (_, i) => [
      buffer.text(i),
      buffer.plainText(i),
      buffer.replicaOf(i),
      buffer.flags(i)
    ]),
    replicas: buffer.replicas,
    offsets: buffer.offsets,
    views: buffer.replicas.map(name => buffer.view(name).length),
    problems: buffer.problemCount(null),
    redrawn: buffer.takeRedrawn(),
    found: buffer.search(all, query),
    text: buffer.toText(all, true),
    raw: buffer.toText(all, true, true)
  };
}

describe('LogBuffer with stamped chunks', () => {
  const lines = [
    'loss 0.5 at  step 3', // spaces within, two in a row
    '\x1b[31mRuntimeError: løss ✓ 日本\x1b[0m',
    '', // a stamp alone
    '2026-01-01T00:00:00Z looks like a stamp',
    '  0%|',
    '\r 50%|' // a redraw after the stamp
  ];

  it('shows a stamped chunk as the same chunk unstamped', () => {
    const plain = new LogBuffer();
    const stamp = new LogBuffer();
    for (const [buffer, text] of [
      [plain, lines.join('\n') + '\n'],
      [stamp, stamped(lines)]
    ] as const) {
      buffer.append({
        ...chunk('master-0', text, 40),
        stamped: buffer === stamp
      });
      // a redraw of the previous chunk's last line
      buffer.append({
        ...chunk(
          'master-0',
          buffer === stamp ? stamped(['\r100%|']) : '\r100%|\n',
          50
        ),
        stamped: buffer === stamp
      });
    }
    expect(stamp.length).toBe(5);
    expect(stamp.text(0)).toBe('loss 0.5 at  step 3');
    expect(stamp.text(2)).toBe('');
    expect(stamp.text(3)).toBe('2026-01-01T00:00:00Z looks like a stamp');
    expect(stamp.text(4)).toBe('100%|');
    expect(shown(stamp, 'at  step')).toEqual(shown(plain, 'at  step'));
  });

  it('takes a stamp with its space and no text as an empty line', () => {
    const buffer = new LogBuffer();
    const text = stamped(['a', '', 'b'], false);
    expect(text).toContain('Z \n');
    expect(
      buffer.append({ ...chunk('master-0', text, 3), stamped: true })
    ).toBe(3);
    expect([0, 1, 2].map(i => buffer.text(i))).toEqual(['a', '', 'b']);
  });

  it('keeps the stamps of a chunk not marked stamped', () => {
    const buffer = new LogBuffer();
    buffer.append({ ...chunk('master-0', stamped(['a b']), 1), stamped: true });
    buffer.append(chunk('master-0', stamped(['a b']), 2));
    expect(buffer.text(0)).toBe('a b');
    expect(buffer.text(1)).toBe('2026-11-27T14:00:00.123456789Z a b');
  });

  it('shows a stamped merged chunk as the same merged chunk unstamped', () => {
    const names = ['master-0', 'worker-0', 'worker-1'];
    // Each line's replica; the redraw (line 5) follows worker-0's line 4.
    const owners = '012211';
    const merged = (text: string, stamp: boolean) => ({
      replica: 'worker-1',
      text,
      offset: 30,
      replicas: names,
      owners,
      offsets: { 'master-0': 10, 'worker-0': 20, 'worker-1': 30 },
      stamped: stamp
    });
    const plain = new LogBuffer();
    plain.append(merged(lines.join('\n') + '\n', false));
    const stamp = new LogBuffer();
    stamp.append(merged(stamped(lines), true));
    expect(stamp.length).toBe(5);
    expect(stamp.view('worker-0').length).toBe(2);
    expect(stamp.text(stamp.view('worker-0').lineAt(1))).toBe(' 50%|');
    expect(stamp.text(stamp.view('worker-1').lineAt(0))).toBe('');
    expect(shown(stamp, 'RuntimeError')).toEqual(shown(plain, 'RuntimeError'));
  });

  it('shows random stamped merged chunks as the same chunks unstamped', () => {
    const names = ['master-0', 'worker-0', 'worker-1'];
    const pieces = [
      'a',
      'b c',
      '\rbar',
      'Error: x',
      '\x1b[1mbo ld',
      '',
      'ü 日'
    ];
    const random = randomMerged(11, names, pieces);
    for (let round = 0; round < 50; round++) {
      const plain = new LogBuffer();
      const stamp = new LogBuffer();
      for (let c = 0; c < 4; c++) {
        const { lines, merged } = random.chunk(10 * round + c);
        plain.append(merged);
        const bare = random.next(2) === 0;
        stamp.append({ ...merged, text: stamped(lines, bare), stamped: true });
      }
      expect(shown(stamp, 'b c')).toEqual(shown(plain, 'b c'));
    }
  });
});

describe('IndexArray', () => {
  it('grows as it is pushed', () => {
    const array = new IndexArray();
    for (let i = 0; i < 5000; i++) {
      array.push(i * 2);
    }
    expect(array.length).toBe(5000);
    expect(array.get(4999)).toBe(9998);
  });
});

"""Display lines (job/loglines.py, what the local pump writes): the log line contract."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from jupyter_pytorchjob.job.loglines import DisplayLines, StampedLines, cut, may_hold_a_line_over


def split(*chunks: bytes, limit: int = 16384) -> list[bytes]:
    lines = DisplayLines(limit)
    out = [line for chunk in chunks for line in lines.feed(chunk)]
    return out + lines.close()


@pytest.mark.parametrize(
    ("chunks", "lines"),
    [
        ((b"a\nb\n",), [b"a", b"b"]),
        ((b"a\n\nb",), [b"a", b"", b"b"]),  # a blank line stays, the last line without \n too
        ((b"a\r\nb\r\n",), [b"a", b"b"]),  # CRLF is one line end
        ((b"a\r", b"\nb"), [b"a", b"b"]),  # ... also cut between two reads
        # a progress bar: each redraw is a line starting with \r (the first is plain)
        ((b"\r 1%\r 2%", b"\r 3%"), [b" 1%", b"\r 2%", b"\r 3%"]),
        ((b"epoch 1\n\r 1%\r 2%\n",), [b"epoch 1", b" 1%", b"\r 2%"]),
        ((b"a\r\rb\r\n",), [b"a", b"\rb"]),  # empty redraws make no line
        ((b"a\r", b"b\n", b"c\n"), [b"a", b"\rb", b"c"]),  # a redraw ends with its line
        ((b"x" * 6 + b"\rab\n",), [b"x" * 4, b"x" * 2, b"\rab"]),
        ((b"ab\r" + b"x" * 6 + b"\n",), [b"ab", b"\rxxxx", b"xx"]),  # the rest continues plain
        ((b"ab\r" + b"x" * 5, b"x\n"), [b"ab", b"\rxxxx", b"xx"]),
        ((b"\r\n",), [b""]),  # a CRLF blank line is a blank line
        ((b"x" * 10 + b"\n",), [b"x" * 4, b"x" * 4, b"x" * 2]),
        ((b"x" * 4 + b"\n",), [b"x" * 4]),  # exactly the limit: one line
        ((b"x" * 5, b"x" * 5), [b"x" * 4, b"x" * 4, b"x" * 2]),  # cut before the line ends
    ],
)
def test_lines(chunks: tuple[bytes, ...], lines: list[bytes]) -> None:
    limit = 4 if any(b"xxxx" in c for c in chunks) else 16384
    assert split(*chunks, limit=limit) == lines


def test_a_cut_never_splits_a_utf8_character() -> None:
    line = "ab€€".encode()  # € is 3 bytes
    assert cut(line, 4) == [b"ab", "€".encode(), "€".encode()]
    assert b"".join(cut(line, 4)) == line


@given(
    st.binary(max_size=200) | st.text("ab€\r\n", max_size=100).map(str.encode),
    st.lists(st.integers(0, 200), max_size=6),
    st.sampled_from([8, 10**6]),
)
def test_reads_split_anywhere_give_the_same_lines(data: bytes, cuts: list[int], limit: int) -> None:
    """The lines depend on the bytes only, never on how the pipe delivered them."""
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    lines = split(*chunks, limit=limit)
    assert lines == split(data, limit=limit)
    assert all(len(line.removeprefix(b"\r")) <= limit for line in lines)
    assert all(b"\r" not in line[1:] for line in lines)


@given(st.lists(st.integers(0, 90), min_size=1, max_size=12), st.integers(1, 40))
@example([0, 0, 9], 8)  # just over the limit, at the end, found by the last window only
def test_a_line_over_the_limit_is_never_missed(lengths: list[int], limit: int) -> None:
    """The cheap check (a ``find`` per half limit) says no only where no line is longer."""
    data = b"".join(b"x" * n + b"\n" for n in lengths)
    longest = max(lengths)
    if not may_hold_a_line_over(data, limit):
        assert longest <= limit


def test_a_long_kubelet_line_among_short_ones_is_cut_in_one_read() -> None:
    """The kubelet's lines in a 64 KiB read: one of 40 KiB among short ones comes out in
    pieces of at most the limit, each with the line's stamp; the rest as they were."""
    stamp = b"2026-11-27T11:38:42.123456789Z "
    short = b"".join(stamp + b"step %05d\n" % i for i in range(1000))
    data = short + stamp + b"x" * 40_000 + b"\n" + short
    out = StampedLines(16384).feed(data)
    lines = out[:-1].split(b"\n")
    assert all(line.startswith(stamp) for line in lines)
    texts = [line[len(stamp) :] for line in lines]
    assert max(map(len, texts)) == 16384
    assert texts[1000:1003] == [b"x" * 16384, b"x" * 16384, b"x" * (40_000 - 2 * 16384)]
    assert b"".join(texts) == data.replace(b"\n", b"").replace(stamp, b"")

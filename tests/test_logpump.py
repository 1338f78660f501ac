"""Display lines (job/loglines.py, what the local pump writes): the log line contract."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_pytorchjob.job.loglines import DisplayLines, cut


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

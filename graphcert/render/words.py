"""Text that keeps every token whole at any width: paths, hashes, numbers and
names never break across lines and are never cut behind "…"; only free text wraps, at spaces.

- `Prose`: free text, wrapped at spaces (between fields set apart by two spaces first); a
  word wider than the line gets a line of its own.
- `Pairs`: key/value lines (a certificate's header); a value too wide to sit beside its key
  goes whole onto the lines below it.
- `Outline`: a tree whose labels wrap beside their guides and are never cropped.

Tables are render/layout.py's `Grid`, on the same wrapping. Each renders at the width rich
gives it (the terminal's; a piped console gives the widest line) and never ends a line with
spaces. Colour is only styling: the layout is computed on the plain text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.style import Style
from rich.text import Text

Cell = str | Text  # a str is literal text, never markup (certificates fill cells)
_WORD = re.compile(r"\S+")


def as_text(cell: Cell) -> Text:
    """`cell` as rich Text; a str is taken literally ("[x]" in a kernel name stays)."""
    return cell if isinstance(cell, Text) else Text(cell)


def units(text: str, sep: str | None = None) -> list[tuple[int, int]]:
    """Where `text` may not break: its words (runs of non-spaces), or with `sep` (", ") the
    items between separators, each keeping the separator's mark ("a, b" -> "a,", "b")."""
    if sep is None:
        return [(m.start(), m.end()) for m in _WORD.finditer(text)]
    out, start, mark = [], len(text) - len(text.lstrip(" ")), len(sep.rstrip())
    while (i := text.find(sep, start)) >= 0:
        out.append((start, i + mark))
        start = i + len(sep)
    out.append((start, len(text.rstrip(" "))))
    return [(s, e) for s, e in out if e > s]


def longest_word(text: str, sep: str | None = None) -> int:
    """The widest unit of `text` (see `units`) of any line, in cells (0 for blank text)."""
    return max((cell_len(line[s:e]) for line in text.split("\n") for s, e in units(line, sep)),
               default=0)


def widest_line(text: str) -> int:
    """The widest line of `text`, in terminal cells."""
    return max((cell_len(line) for line in text.split("\n")), default=0)


def breaks(plain: str, width: int, sep: str | None = None) -> tuple[list[tuple[int, int]], int]:
    """Where one line of text breaks at `width` (see wrap_words): the (start, end) of each
    line, and the indent of every line after the first."""
    words = units(plain, sep)
    if not words:
        return [(0, 0)], 0
    indent = words[0][0]
    hang = indent if indent + max(cell_len(plain[s:e]) for s, e in words) <= width else 0
    spans: list[tuple[int, int]] = []
    start, end = 0, words[0][1]
    for s, e in words[1:]:
        lead = 0 if start == 0 else hang
        if lead + cell_len(plain[start:e]) <= width:
            end = e
        else:
            spans.append((start, end))
            start, end = s, e
    spans.append((start, end))
    return spans, hang


def wrap_words(text: Text, width: int, sep: str | None = None) -> list[Text]:
    """`text` in lines of at most `width` cells, broken only at spaces (with `sep`, only at
    that separator). A word wider than `width` gets a line of its own, whole (the terminal
    may fold it; its bytes stay together). A paragraph's leading spaces indent its
    continuation lines too."""
    out: list[Text] = []
    for para in text.split("\n", allow_blank=True) or [Text("")]:
        spans, hang = breaks(para.plain, width, sep)
        out += [para[s:e] if s == 0 else Text.assemble(" " * hang, para[s:e])
                for s, e in spans]
    return out


def wrap_prose(text: Text, width: int) -> list[Text]:
    """Free text wrapped as wrap_words does, except that a paragraph whose fields are set
    apart by two spaces ("topology 1f2e...  shape 9a8b...") breaks only between fields
    where each field fits on a line."""
    out: list[Text] = []
    for para in text.split("\n", allow_blank=True) or [Text("")]:
        plain = para.plain
        fields = "  " in plain.strip() and longest_word(plain, "  ") <= width
        out += wrap_words(para, width, "  " if fields else None)
    return out


def pad(line: Text, width: int, right: bool) -> Text:
    """`line` padded with spaces to `width` cells (never cut)."""
    gap = width - cell_len(line.plain)
    if gap <= 0:
        return line
    return Text.assemble(" " * gap, line) if right else Text.assemble(line, " " * gap)


def segments(console: Console, lines: list[Text]) -> RenderResult:
    """The lines as segments, each without trailing spaces and ended by a newline."""
    if not lines:
        return
    for line in lines:
        line.rstrip()
    # join turns each line's own style into a span, which render() then applies
    yield from Text("\n").join(lines).render(console, end="\n")


class Prose:
    """Free text wrapped at spaces to the width given, every word whole."""

    def __init__(self, text: Cell, *, style: str | Style = "") -> None:
        self.text = as_text(text)
        if style:
            self.text.stylize(style)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from segments(console, wrap_prose(self.text, options.max_width))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        plain = self.text.plain
        return Measurement(longest_word(plain), widest_line(plain))


class Pairs:
    """Key/value lines: keys in one column, each value beside its key, wrapped at spaces;
    a value with a word too wide for the space beside the key goes whole below it."""

    def __init__(self, rows: Sequence[tuple[str, Cell]], *, gap: int = 2,
                 key_style: str = "bold") -> None:
        self.rows = [(Text(k, style=key_style), as_text(v)) for k, v in rows]
        self.gap = gap
        self.key_width = max((cell_len(k.plain) for k, _ in self.rows), default=0)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        room = width - self.key_width - self.gap
        lines: list[Text] = []
        for key, value in self.rows:
            head = pad(key, self.key_width + self.gap, right=False)
            if longest_word(value.plain) <= room:
                wrapped = wrap_prose(value, room)
                lines.append(Text.assemble(head, wrapped[0]))
                lines += [Text.assemble(" " * cell_len(head.plain), w) for w in wrapped[1:]]
                continue
            lines.append(key)
            indent = 2 if longest_word(value.plain) <= width - 2 else 0
            lines += [Text.assemble(" " * indent, w) for w in wrap_prose(value, width - indent)]
        yield from segments(console, lines)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        side = self.key_width + self.gap
        return Measurement(max((longest_word(v.plain) for _, v in self.rows), default=0),
                           side + max((widest_line(v.plain) for _, v in self.rows), default=0))


class Outline:
    """A tree drawn with rich's guides ("├── ", "│   ", "└── "), each label free text
    wrapped at the room its guides leave, never cropped (rich's Tree crops a word wider than
    that room, which would cut a kernel's name)."""

    def __init__(self, label: Cell) -> None:
        self.label = as_text(label)
        self.children: list[Outline] = []

    def add(self, label: Cell) -> Outline:
        """A new child of this node, returned so it can take children of its own."""
        child = Outline(label)
        self.children.append(child)
        return child

    def _walk(self, out: list[Text], prefix: str, width: int) -> None:
        for k, child in enumerate(self.children):
            last = k == len(self.children) - 1
            guide, rest = prefix + ("└── " if last else "├── "), prefix + ("    " if last
                                                                         else "│   ")
            wrapped = wrap_prose(child.label, max(width - cell_len(guide), 1))
            out.append(Text.assemble((guide, "tree.line"), wrapped[0]))
            out += [Text.assemble((rest, "tree.line"), w) for w in wrapped[1:]]
            child._walk(out, rest, width)

    def lines(self, width: int) -> list[Text]:
        """The tree laid out at `width`, one Text per line."""
        out = wrap_prose(self.label, width)
        self._walk(out, "", width)
        return out

    def _widest(self, depth: int) -> int:
        return max([4 * depth + widest_line(self.label.plain),
                    *(c._widest(depth + 1) for c in self.children)])

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from segments(console, self.lines(options.max_width))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(longest_word(self.label.plain), self._widest(0))

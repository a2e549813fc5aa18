"""Layouts that keep every token whole at any width (issue 34): paths, hashes, numbers and
names never break across lines and are never cut behind "…"; only free text wraps, at spaces.

- `Prose`: free text, wrapped at spaces; a word wider than the line gets a line of its own.
- `Pairs`: key/value lines (a certificate's header); a value too wide to sit beside its key
  goes whole onto the lines below it.
- `Grid`: a table. When it is too wide for the width it is given, it changes layout rather
  than mangling cells: columns move, one by one, out of the table onto labelled lines under
  each row (the columns nobody filled first, then those a view ranks lowest, then from the
  right), down to one record per block (only the row's key columns left in the table).

Each renders at the width rich gives it (the terminal's; a piped console gives the widest
row, so piped output is one line per row) and never ends a line with spaces. Colour is only
styling: the layout is computed on the plain text, so it is the same with or without it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

Cell = str | Text  # a str is literal text, never markup (certificates fill cells)
_WORD = re.compile(r"\S+")
_RULE = "\u2500"
_MAX_CANDIDATES = 96


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


def _pad(line: Text, width: int, right: bool) -> Text:
    """`line` padded with spaces to `width` cells (never cut)."""
    gap = width - cell_len(line.plain)
    if gap <= 0:
        return line
    return Text.assemble(" " * gap, line) if right else Text.assemble(line, " " * gap)


def _segments(console: Console, lines: list[Text]) -> RenderResult:
    """The lines as segments, each without trailing spaces and ended by a newline."""
    if not lines:
        return
    for line in lines:
        line.rstrip()
    # join turns each line's own style into a span, which render() then applies
    yield from Text("\n").join(lines).render(console, end="\n")


class Prose:
    """Free text wrapped at spaces to the width given, every word whole."""

    def __init__(self, text: Cell, *, style: str = "") -> None:
        self.text = as_text(text)
        if style:
            self.text.stylize(style)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from _segments(console, wrap_prose(self.text, options.max_width))

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
            head = _pad(key, self.key_width + self.gap, right=False)
            if longest_word(value.plain) <= room:
                wrapped = wrap_prose(value, room)
                lines.append(Text.assemble(head, wrapped[0]))
                lines += [Text.assemble(" " * cell_len(head.plain), w) for w in wrapped[1:]]
                continue
            lines.append(key)
            indent = 2 if longest_word(value.plain) <= width - 2 else 0
            lines += [Text.assemble(" " * indent, w) for w in wrap_prose(value, width - indent)]
        yield from _segments(console, lines)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        side = self.key_width + self.gap
        return Measurement(max((longest_word(v.plain) for _, v in self.rows), default=0),
                           side + max((widest_line(v.plain) for _, v in self.rows), default=0))


@dataclass(frozen=True)
class Column:
    """A Grid column. `wrap`: free text or a list, which may break at its spaces (a column
    of tokens never breaks). `key`: names the row; stays in the table at every width.
    `keep`: higher stays in the table longer when columns must move under the rows. `sep`:
    a list's separator (", "), the only place a wrapping column may then break."""

    header: str
    right: bool = False
    wrap: bool = False
    key: bool = False
    keep: int = 0
    sep: str | None = None


class Grid:
    """A table that keeps every cell's tokens whole (see the module's docstring)."""

    def __init__(self, columns: Sequence[Column], rows: Iterable[Sequence[Cell]], *,
                 title: Cell | None = None, caption: Cell | None = None, rule: bool = True,
                 gap: int = 2) -> None:
        self.columns = tuple(columns)
        self.rows = [tuple(as_text(c) for c in row) for row in rows]
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"a row of {len(row)} cells for {len(self.columns)} columns")
        self.title = None if title is None else as_text(title)
        self.caption = None if caption is None else as_text(caption)
        self.rule, self.gap = rule, gap
        # per column, per row: (text, natural width, lines), what the layout measures
        self._cells = [[(row[i].plain, widest_line(row[i].plain), row[i].plain.count("\n") + 1)
                        for row in self.rows] for i in range(len(self.columns))]
        self._heights: dict[tuple[int, int], int] = {}
        self.bounds = [self._bounds(i) for i in range(len(self.columns))]

    def _bounds(self, i: int) -> tuple[int, int]:
        """(narrowest, natural) width of column i: its tokens whole, its header's words
        whole; natural: every cell and the header on one line."""
        col = self.columns[i]
        cells = [row[i].plain for row in self.rows]
        natural = max((widest_line(c) for c in cells), default=0)
        low = max((longest_word(c, col.sep) for c in cells), default=0) if col.wrap \
            else natural
        low = max(low, longest_word(col.header), 1)
        return low, max(natural, cell_len(col.header), low)

    def _need(self, shown: Sequence[int]) -> int:
        return sum(self.bounds[i][0] for i in shown) + self.gap * max(len(shown) - 1, 0)

    def natural_width(self) -> int:
        """The width at which every cell and header is on one line."""
        n = len(self.columns)
        return sum(high for _, high in self.bounds) + self.gap * max(n - 1, 0)

    def layout(self, width: int) -> tuple[list[int], list[int]]:
        """(columns in the table, columns moved under each row) at `width`."""
        shown = list(range(len(self.columns)))
        filled = [any(row[i].plain.strip() for row in self.rows) for i in shown]
        # empty columns first (they move nothing), then by rank, then from the right
        order = sorted((i for i in shown if not self.columns[i].key),
                       key=lambda i: (filled[i], self.columns[i].keep, -i))
        moved: list[int] = []
        for i in order:
            if self._need(shown) <= width:
                break
            shown.remove(i)
            moved.append(i)
        return shown, sorted(moved)

    def _height(self, i: int, width: int) -> int:
        """How many lines column i takes at `width`, over its header and every row."""
        key = (i, width)
        if key not in self._heights:
            col = self.columns[i]
            total = len(breaks(col.header, width)[0])
            for plain, natural, lines in self._cells[i]:
                if natural <= width or not col.wrap:
                    total += lines
                else:
                    total += sum(len(breaks(p, width, col.sep)[0]) for p in plain.split("\n"))
            self._heights[key] = total
        return self._heights[key]

    def _candidates(self, i: int) -> list[int]:
        """Widths worth trying for column i: each from its narrowest to its natural one (a
        sample of them for a very wide column), the natural one always."""
        low, high = self.bounds[i]
        step = max((high - low) // _MAX_CANDIDATES, 1)
        return sorted(set(range(low + 1, high + 1, step)) | {high}) if high > low else []

    def widths(self, shown: Sequence[int], width: int) -> list[int]:
        """Each shown column's width: its narrowest, then, step by step, the widening that
        saves the most lines per cell of room (a free-text column against a header that
        wraps), then what room is left to the columns that want least first."""
        widths = [self.bounds[i][0] for i in shown]
        spare = width - self._need(shown)
        candidates = [self._candidates(i) for i in shown]
        while spare > 0:
            best: tuple[float, int, int] | None = None
            for j, i in enumerate(shown):
                now = self._height(i, widths[j])
                for w in candidates[j]:
                    if w <= widths[j]:
                        continue
                    if w - widths[j] > spare:
                        break
                    saved = now - self._height(i, w)
                    if saved > 0 and (best is None or saved / (w - widths[j]) > best[0]):
                        best = (saved / (w - widths[j]), j, w)
            if best is None:
                break
            _, j, w = best
            spare -= w - widths[j]
            widths[j] = w
        for j in sorted(range(len(shown)), key=lambda j: self.bounds[shown[j]][1] - widths[j]):
            grow = min(max(spare, 0), self.bounds[shown[j]][1] - widths[j])
            widths[j] += grow
            spare -= grow
        return widths

    def _line_up(self, cells: Sequence[list[Text]], widths: Sequence[int],
                 right: Sequence[bool]) -> list[Text]:
        height = max((len(c) for c in cells), default=0)
        sep = Text(" " * self.gap)
        lines = []
        for k in range(height):
            parts = [_pad(c[k] if k < len(c) else Text(""), w, r)
                     for c, w, r in zip(cells, widths, right, strict=True)]
            lines.append(sep.join(parts))
        return lines

    def _placement(self, i: int, width: int) -> int | None:
        """Where moved column i's values go: None beside their labels when every value fits
        there, else the indent of the lines below the labels (4, or 0 when a value does not
        fit even so), the same for every row, so the column reads alike in each."""
        col = self.columns[i]
        widest = max((longest_word(row[i].plain, col.sep) for row in self.rows), default=0)
        if widest <= width - cell_len(f"  {col.header}: "):
            return None
        return 4 if widest <= width - 4 else 0

    def _details(self, row: Sequence[Text], moved: Sequence[tuple[int, int | None]],
                 width: int) -> list[Text]:
        """The moved columns of one row, one labelled value each ("  file: reports/..."),
        or the value whole on the lines below its label."""
        lines: list[Text] = []
        for i, indent in moved:
            value, col = row[i], self.columns[i]
            if not value.plain.strip():
                continue
            label = Text(f"  {col.header}:", style="table.header")
            if indent is None:
                room = width - cell_len(label.plain) - 1
                wrapped = wrap_words(value, room, col.sep)
                lines.append(Text.assemble(label, " ", wrapped[0]))
                lines += [Text.assemble(" " * (width - room), w) for w in wrapped[1:]]
                continue
            lines.append(label)
            lines += [Text.assemble(" " * indent, w)
                      for w in wrap_words(value, width - indent, col.sep)]
        return lines

    def lines(self, width: int) -> list[Text]:
        """The table laid out at `width`, one Text per line."""
        shown, moved = self.layout(width)
        widths = self.widths(shown, width)
        cols = [self.columns[i] for i in shown]
        right = [c.right for c in cols]
        out: list[Text] = []
        if self.title is not None:
            out += wrap_prose(Text.assemble(self.title, style="table.title"), width)
        header = [wrap_words(Text(c.header, style="table.header"), w)
                  for c, w in zip(cols, widths, strict=True)]
        out += self._line_up(header, widths, right)
        if self.rule:
            out.append(Text(_RULE * (sum(widths) + self.gap * max(len(widths) - 1, 0))))
        # rows are set apart by a blank line when more than one moved column says something
        spaced = sum(any(row[i].plain.strip() for row in self.rows) for i in moved) > 1
        below = [(i, self._placement(i, width)) for i in moved]
        for n, row in enumerate(self.rows):
            if spaced and n:
                out.append(Text(""))
            cells = []
            for i, w in zip(shown, widths, strict=True):
                cell = row[i]
                col = self.columns[i]
                cells.append(wrap_words(cell, w, col.sep) if col.wrap
                             else list(cell.split("\n")) or [Text("")])
            out += self._line_up(cells, widths, right)
            out += self._details(row, below, width)
        if self.caption is not None:
            out += wrap_prose(Text.assemble(self.caption, style="table.caption"), width)
        return out

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from _segments(console, self.lines(options.max_width))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        extra = [widest_line(t.plain) for t in (self.title, self.caption) if t is not None]
        keys = [i for i, c in enumerate(self.columns) if c.key]
        return Measurement(self._need(keys), max([self.natural_width(), *extra]))


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
        yield from _segments(console, self.lines(options.max_width))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(longest_word(self.label.plain), self._widest(0))

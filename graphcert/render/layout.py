"""Tables that keep every cell's tokens whole at any width.

`Grid` is a table. When it is too wide for the width it is given, it changes layout rather
than mangling cells: columns move, one by one, out of the table onto labelled lines under
each row (the columns nobody filled first, then those a view ranks lowest, then from the
right), down to one record per block (only the row's key columns left in the table). Cells
wrap as render/words.py wraps text: a token column never breaks, a free-text or list column
only at its spaces or separators. Piped, a console gives it its natural width: one line a
row. No line ends with spaces; colour changes no layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from graphcert.render.words import (
    Cell,
    as_text,
    breaks,
    longest_word,
    pad,
    segments,
    widest_line,
    wrap_prose,
    wrap_words,
)

_RULE = "\u2500"
_MAX_CANDIDATES = 96


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
            parts = [pad(c[k] if k < len(c) else Text(""), w, r)
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
        yield from segments(console, self.lines(options.max_width))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        extra = [widest_line(t.plain) for t in (self.title, self.caption) if t is not None]
        keys = [i for i, c in enumerate(self.columns) if c.key]
        return Measurement(self._need(keys), max([self.natural_width(), *extra]))

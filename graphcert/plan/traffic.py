"""A traffic mix: how often each batch size comes, and the loader of its files. Pure.

Accepted files (read with graphcert.fileread's bounded reads):

- CSV: `size,count` rows, or one size per row (a list of the batches seen); an optional
  header row of names (`size,count`), blank lines and `#` comment lines are skipped;
- JSON: a histogram object `{"1": 120, "8": 40}`, an array of pairs `[[1, 120], [8, 40]]`,
  or a plain list of sizes `[1, 1, 8, 3]`.

The format is the file's suffix (.csv, .json), else its first character (`[` or `{` is
JSON). Anything wrong is one InputError naming the file, the line or item, and the fix.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from graphcert.buckets import MAX_SIZE
from graphcert.errors import InputError, clip, clip_repr
from graphcert.fileio import JSONProblem, parse_json
from graphcert.fileread import MiB, read_bounded, shown

MAX_TRAFFIC_BYTES = 64 * MiB  # ~10 million sizes as a plain list; a histogram is far smaller
MAX_COUNT = 10 ** 15  # one size's count (far beyond any log; keeps the sums exact in floats)
_DIGITS = len(str(MAX_SIZE * MAX_COUNT))  # integer text longer than this is refused unread
_HEADER = re.compile(r"[A-Za-z_][A-Za-z0-9_ ]*")
_FORMS = ("give size,count rows or one size per row (CSV), or {\"size\": count}, "
          "[[size, count], ...] or [size, ...] (JSON)")


@dataclass(frozen=True)
class Traffic:
    """Batch sizes (ascending, distinct, >= 1) and how many steps came at each (>= 1)."""

    sizes: tuple[int, ...]
    counts: tuple[int, ...]
    source: str = "traffic"  # where it came from, for messages

    def __post_init__(self) -> None:
        if not self.sizes:
            raise InputError(f"{self.source}: no batch size", hint=_FORMS)
        if len(self.sizes) != len(self.counts):
            raise InputError(f"{self.source}: {len(self.sizes)} sizes but "
                             f"{len(self.counts)} counts")
        for size, count in zip(self.sizes, self.counts, strict=True):
            _check(size, "size", self.source, 1)
            _check(count, "count", self.source, 1)
        for prev, cur in zip(self.sizes, self.sizes[1:], strict=False):
            if cur <= prev:
                raise InputError(f"{self.source}: sizes are not ascending and distinct "
                                 f"({prev:,} then {cur:,})")

    @classmethod
    def from_counts(cls, counts: Mapping[int, int], source: str = "traffic") -> Traffic:
        """A histogram {size: count}."""
        sizes = sorted(counts)
        return cls(tuple(sizes), tuple(counts[s] for s in sizes), source)

    @classmethod
    def from_sizes(cls, sizes: Iterable[int], source: str = "traffic") -> Traffic:
        """The batch sizes seen, one per step, in any order."""
        return cls.from_counts(Counter(sizes), source)

    @property
    def total(self) -> int:
        return sum(self.counts)

    @property
    def largest(self) -> int:
        return self.sizes[-1]

    def shares(self) -> tuple[float, ...]:
        """Each size's share of the steps (they sum to 1)."""
        total = self.total
        return tuple(c / total for c in self.counts)


def _check(value: object, what: str, where: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where}: {what} {clip_repr(value)} is not an integer")
    if value < least:
        raise InputError(f"{where}: {what} {value} is below {least}")
    return value


# --- reading -----------------------------------------------------------------------------


class _Bad(Exception):
    """One problem in a file, without its name (added once, where the file is known)."""

    def __init__(self, problem: str, hint: str | None = None):
        super().__init__(problem)
        self.problem = problem
        self.hint = hint


def load_traffic(path: Path | str, *, max_size: int | None = None) -> Traffic:
    """The traffic in `path` (a file the user named: a FIFO is read too, bounded)."""
    raw = read_bounded(path, MAX_TRAFFIC_BYTES)
    suffix = Path(path).suffix.lower()
    return parse_traffic(raw, f"traffic {shown(path)}", max_size=max_size,
                         form=suffix[1:] if suffix in (".csv", ".json") else None)


def parse_traffic(raw: bytes, source: str = "traffic", *, max_size: int | None = None,
                  form: str | None = None) -> Traffic:
    """Traffic from a file's bytes; `form` "csv" or "json", else told by the first character.
    InputError `<source>: <where>: <problem>` (one line) for anything wrong."""
    top = MAX_SIZE if max_size is None else max_size
    try:
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise _Bad("not UTF-8 text", _FORMS) from None
        if not text.strip():
            raise _Bad("empty", _FORMS)
        if form is None:
            form = "json" if text.lstrip()[0] in "[{" else "csv"
        tally = _Tally(top)
        if form == "json":
            _from_json(raw, tally)
        else:
            _from_csv(text, tally)
    except _Bad as bad:
        raise InputError(f"{source}: {bad.problem}", hint=bad.hint) from None
    return Traffic.from_counts(tally.counts, source)


def _integer(text: str, what: str, where: str, least: int) -> int:
    """A field's integer: digits only (no sign, point or exponent), at least `least`."""
    raw = text.strip()
    if not raw:
        raise _Bad(f"{where}: {what} is empty", _FORMS)
    if re.fullmatch(r"-\s*\d+", raw):
        raise _Bad(f"{where}: {what} {clip(''.join(raw.split()), 24)} is negative",
                   "sizes start at 1 and counts at 1")
    if not re.fullmatch(r"\+?\d+", raw):
        raise _Bad(f"{where}: {what} {clip_repr(raw, 24)} is not an integer",
                   "write whole numbers such as 8 or 120")
    if len(raw.lstrip("+0")) > _DIGITS:
        raise _Bad(f"{where}: {what} {clip_repr(raw, 24)} is too large")
    return _least(int(raw), what, where, least)


def _least(value: int, what: str, where: str, least: int) -> int:
    if value < 0:
        raise _Bad(f"{where}: {what} {value} is negative", "sizes start at 1 and counts at 1")
    if value < least:
        fix = ("batch sizes start at 1" if what == "size"
               else "leave out a size that never came")
        raise _Bad(f"{where}: {what} {value} is not positive", fix)
    if what == "size" and value > MAX_SIZE:
        raise _Bad(f"{where}: size {value:,} is larger than graphcert supports (2^40)")
    if what == "count" and value > MAX_COUNT:
        raise _Bad(f"{where}: count {value:,} is above {MAX_COUNT:,}",
                   "scale the counts down: only their ratios matter")
    return value


class _Tally:
    """The counts read so far, where each size was first seen, and the largest size allowed."""

    def __init__(self, top: int):
        self.top = top
        self.counts: dict[int, int] = {}
        self.firsts: dict[int, str] = {}

    def add(self, size: int, count: int, where: str, *, repeats: bool) -> None:
        """Count `size` once more; a histogram (`repeats` False) lists each size once."""
        if size > self.top:
            raise _Bad(f"{where}: size {size:,} is above max_size {self.top:,}",
                       "raise max_size or drop those batches")
        if size in self.counts and not repeats:
            raise _Bad(f"{where}: size {size:,} is listed again (first at "
                       f"{self.firsts[size]})", "give each size once, with its total count")
        self.counts[size] = self.counts.get(size, 0) + count
        self.firsts.setdefault(size, where)


def _from_csv(text: str, tally: _Tally) -> None:
    width = 0
    reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True, strict=True)
    try:
        for row in reader:
            where = f"line {reader.line_num}"
            fields = [f.strip() for f in row]
            if not any(fields) or fields[0].startswith("#"):
                continue
            if not width and all(_HEADER.fullmatch(f) for f in fields):
                width = len(fields)  # a header row of names: it sets the width, holds no data
                if width in (1, 2):
                    continue
            if not width:
                width = len(fields)
            if len(fields) not in (1, 2):
                raise _Bad(f"{where}: {len(fields)} fields", _FORMS)
            if len(fields) != width:
                raise _Bad(f"{where}: {len(fields)} field(s) where the rows above have "
                           f"{width}", "give every row as size,count, or every row as a size")
            size = _integer(fields[0], "size", where, 1)
            count = _integer(fields[1], "count", where, 1) if width == 2 else 1
            tally.add(size, count, where, repeats=width == 1)
    except csv.Error as exc:
        raise _Bad(f"line {reader.line_num}: not CSV ({exc})", _FORMS) from None
    if not tally.counts:
        raise _Bad("no batch size (only a header, blank lines or comments)", _FORMS)


def _json_int(value: object, what: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        kind = "a number with a point" if isinstance(value, float) else _kind(value)
        raise _Bad(f"{where}: {what} {clip_repr(value, 24)} is {kind}, not an integer",
                   "write whole numbers such as 8 or 120")
    return _least(value, what, where, 1)


def _kind(value: object) -> str:
    kinds = ((dict, "an object"), (list, "an array"), (str, "a string"), (bool, "a boolean"),
             (int, "an integer"), (float, "a number"), (type(None), "null"))
    return next(name for t, name in kinds if isinstance(value, t))


def _from_json(raw: bytes, tally: _Tally) -> None:
    try:
        # object: each branch below narrows it with isinstance, the item checks with it
        doc: object = parse_json(raw)
    except JSONProblem as exc:
        raise _Bad(exc.problem, _FORMS) from None
    if isinstance(doc, dict):
        for key, value in doc.items():
            where = f"key {clip_repr(key, 24)}"
            tally.add(_integer(key, "size", where, 1), _json_int(value, "count", where), where,
                      repeats=False)
    elif isinstance(doc, list):
        pairs = bool(doc) and isinstance(doc[0], list)
        for i, item in enumerate(doc, 1):
            where = f"item {i}"
            if pairs != isinstance(item, list):
                raise _Bad(f"{where} is {_kind(item)} where item 1 is "
                           f"{'a pair' if pairs else _kind(doc[0])}",
                           "give all [size, count] pairs or all sizes")
            if pairs and len(item) != 2:
                raise _Bad(f"{where}: {clip_repr(item, 24)} is not a [size, count] pair",
                           _FORMS)
            size = _json_int(item[0] if pairs else item, "size", where)
            tally.add(size, _json_int(item[1], "count", where) if pairs else 1, where,
                      repeats=not pairs)
    else:
        raise _Bad(f"{_kind(doc)}, not a histogram or a list of sizes", _FORMS)
    if not tally.counts:
        raise _Bad(f"an empty {'object' if isinstance(doc, dict) else 'array'}", _FORMS)

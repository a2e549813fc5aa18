"""How numbers read in the terminal views, in one place, so `show`, `diff` and the command
that made a certificate print the same figure the same way.

Sizes and capacities (n, a class, a bucket, a swept value) print as a user types them on the
command line (`--classes 1024`, `--size 1048576`): digits only, so a comma only ever separates
the items of a list. Times print in microseconds with two decimals and a thousands separator.
"""

from __future__ import annotations

from collections.abc import Iterable


def size(n: int) -> str:
    """A size or capacity: 1048576 (no thousands separator)."""
    return str(n)


def sizes(ns: Iterable[int]) -> str:
    """A list of sizes: "1025, 1276, 1715, 2048"; "-" for none."""
    return ", ".join(size(n) for n in ns) or "-"


def us(seconds: float | None) -> str:
    """A time in microseconds: "1,234.56 µs"; "n/a" for none."""
    return "n/a" if seconds is None else f"{seconds * 1e6:,.2f} µs"

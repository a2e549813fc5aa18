"""How long bucket lists with huge powers take to be refused (bounds are checked on the
digits before any power is computed): the inputs of tests/workloads/test_buckets.py, which once
asserted < 0.5 s for all four and now only that each is refused. Printed, not asserted.

    python benchmarks/bucket_parse_speed.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _timing import median_s  # noqa: E402
from test_buckets import HUGE_POWERS  # noqa: E402  (the inputs the test refuses)

from graphcert.buckets import parse_buckets  # noqa: E402
from graphcert.errors import InputError  # noqa: E402


def refuse(text: str) -> None:
    try:
        parse_buckets(text)
    except InputError:
        return
    raise SystemExit(f"{text[:40]!r} was accepted: the test would fail")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(f"parse_buckets refusing a huge power, median of {args.repeat}:")
    total = 0.0
    for text in HUGE_POWERS:
        t = median_s(lambda text=text: refuse(text), args.repeat)
        total += t
        shown = text if len(text) <= 24 else f"{text[:12]}...({len(text)} characters)"
        print(f"  {shown:<36} {t * 1e6:9.1f} us")
    print(f"all four: {total * 1e3:.3f} ms (target < 500 ms)")


if __name__ == "__main__":
    main()

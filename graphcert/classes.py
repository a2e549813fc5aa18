"""Capacity classes: n rounded up to a power of two, ranges of classes, sample sizes. Pure."""

from __future__ import annotations

import random
import re

from graphcert.errors import InputError

MAX_SIZE = 1 << 40


def class_of(n: int) -> int:
    """The smallest power of two >= max(n, 1)."""
    if n < 0:
        raise ValueError(f"size {n} is negative")
    return 1 << (max(n, 1) - 1).bit_length()


def parse_size(text: str | int) -> int:
    """A non-negative element count: 1000, 1_000, 2^20, 1M/1Mi style suffixes not accepted."""
    raw = str(text).strip().replace("_", "")
    m = re.fullmatch(r"(\d+)\s*\^\s*(\d+)", raw)
    try:
        value = int(m.group(1)) ** int(m.group(2)) if m else int(raw)
    except ValueError:
        raise InputError(f"size {text!r} is not an integer",
                         hint="write a count such as 65536 or 2^16") from None
    if value < 0:
        raise InputError(f"size {text!r} is negative", hint="sizes are element counts >= 0")
    if value > MAX_SIZE:
        raise InputError(f"size {text!r} is larger than graphcert supports (2^40)")
    return value


def parse_classes(text: str) -> list[int]:
    """`LO..HI` -> every power-of-two capacity from class_of(LO) to class_of(HI)."""
    lo_text, sep, hi_text = str(text).partition("..")
    if not sep or not lo_text.strip() or not hi_text.strip():
        raise InputError(f"class range {text!r} is malformed",
                         hint="write LO..HI, e.g. 1..1048576 or 2^0..2^20")
    lo, hi = parse_size(lo_text), parse_size(hi_text)
    if lo > hi:
        raise InputError(f"class range {text!r} runs backwards ({lo} > {hi})")
    out, cap = [], class_of(lo)
    while cap <= class_of(hi):
        out.append(cap)
        cap <<= 1
    return out


def lower_edge(capacity: int) -> int:
    """The smallest n whose class is `capacity` (capacity 1 holds 0 and 1)."""
    return 0 if capacity == 1 else capacity // 2 + 1


def sample_sizes(capacity: int, samples: int, seed: int) -> list[int]:
    """The lower edge, the upper edge, and samples-2 seeded sizes between (distinct, sorted)."""
    lo, hi = lower_edge(capacity), capacity
    chosen = {lo, hi}
    inner = list(range(lo + 1, hi))
    want = max(samples - 2, 0)
    if inner and want:
        rng = random.Random(f"{seed}:{capacity}")
        chosen.update(rng.sample(inner, min(want, len(inner))) if len(inner) < 10_000 else
                      (rng.randrange(lo + 1, hi) for _ in range(want)))
    return sorted(chosen)


def padding_waste(capacity: int, sizes: list[int]) -> dict[str, int]:
    """capacity - n over the sizes: the elements allocated and launched but unused."""
    waste = [capacity - n for n in sizes] or [0]
    return {"min": min(waste), "max": max(waste)}

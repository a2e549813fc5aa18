"""Capacity classes and bucket lists: the capacity a size n is captured at. Pure.

Two ways to say which capacities exist, accepted everywhere a class range is taken:

- a power-of-two range `LO..HI` (`2^0..2^20`): capacity of n = the smallest power of two
  >= max(n, 1); class c holds the sizes c/2+1 .. c (class 1 holds 0 and 1);
- a bucket list, as serving engines capture per batch size and pad up to the bucket:
  an ascending list `1,2,4,8,16,24,32`, or a preset `vllm:MAX` / `sglang:MAX` that
  reproduces that engine's default capture sizes up to MAX. Capacity of n = the smallest
  bucket >= n; bucket b holds the sizes (previous bucket)+1 .. b, the first one 1 .. b.
"""

from __future__ import annotations

import bisect
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from graphcert.errors import InputError

MAX_SIZE = 1 << 40
_MAX_EXPONENT = MAX_SIZE.bit_length()  # 2^41 is already too big, whatever the base
_MAX_DIGITS = len(str(MAX_SIZE))
# A preset's MAX bounds how many buckets it expands to (vLLM caps its own at 512 by default).
MAX_PRESET = 1 << 16


def _shown(text: object) -> str:
    """The user's text for a message, clipped so one bad line stays one short line."""
    raw = str(text)
    return repr(raw if len(raw) <= 40 else raw[:37] + "...")


def class_of(n: int) -> int:
    """The smallest power of two >= max(n, 1)."""
    if n < 0:
        raise ValueError(f"size {n} is negative")
    return 1 << (max(n, 1) - 1).bit_length()


def parse_size(text: str | int) -> int:
    """A non-negative element count: 1000, 1_000, 2^20 (suffixes such as 1M are not accepted).

    Bounds are checked on the digits before any power is computed, so `2^99999999` is
    refused at once instead of being evaluated."""
    raw = str(text).strip().replace("_", "")
    m = re.fullmatch(r"(\d+)\s*\^\s*(\d+)", raw)
    too_big = InputError(f"size {_shown(text)} is larger than graphcert supports (2^40)")
    negative = InputError(f"size {_shown(text)} is negative", hint="sizes are element counts >= 0")
    if m:
        base_text, exp_text = m.group(1).lstrip("0") or "0", m.group(2).lstrip("0") or "0"
        if len(base_text) > _MAX_DIGITS:
            raise too_big
        base = int(base_text)
        if base >= 2 and len(exp_text) > len(str(_MAX_EXPONENT)):
            raise too_big
        exp = int(exp_text) if len(exp_text) <= _MAX_DIGITS else 1  # 0^e, 1^e: e >= 1
        if base >= 2 and exp > _MAX_EXPONENT:
            raise too_big
        value = base ** exp
    else:
        digits = raw.lstrip("+-").lstrip("0")
        if re.fullmatch(r"[+-]?\d+", raw) and len(digits) > _MAX_DIGITS:
            raise negative if raw.startswith("-") else too_big
        try:
            value = int(raw)
        except ValueError:
            raise InputError(f"size {_shown(text)} is not an integer",
                             hint="write a count such as 65536 or 2^16") from None
    if value < 0:
        raise negative
    if value > MAX_SIZE:
        raise too_big
    return int(value)


def lower_edge(capacity: int) -> int:
    """The smallest n whose power-of-two class is `capacity` (capacity 1 holds 0 and 1)."""
    return 0 if capacity == 1 else capacity // 2 + 1


def sample_sizes(capacity: int, samples: int, seed: int, *, lower: int | None = None
                 ) -> list[int]:
    """The lower edge, the upper edge, and samples-2 seeded sizes between (distinct, sorted).

    `lower` is the bucket's lower edge; by default the power-of-two class's."""
    lo, hi = (lower_edge(capacity) if lower is None else lower), capacity
    chosen = {lo, hi}
    inner = list(range(lo + 1, hi)) if hi - lo <= 10_000 else []
    want = max(samples - 2, 0)
    if hi - lo > 1 and want:
        rng = random.Random(f"{seed}:{capacity}")
        chosen.update(rng.sample(inner, min(want, len(inner))) if inner else
                      (rng.randrange(lo + 1, hi) for _ in range(want)))
    return sorted(chosen)


def padding_waste(capacity: int, sizes: list[int]) -> dict[str, int]:
    """capacity - n over the sizes: the elements allocated and launched but unused."""
    waste = [capacity - n for n in sizes] or [0]
    return {"min": min(waste), "max": max(waste)}


# --- engine presets -----------------------------------------------------------------------

def vllm_capture_sizes(max_size: int) -> list[int]:
    """vLLM's default CUDA-graph capture sizes up to `max_size`.

    From vllm-project/vllm, vllm/config/vllm.py, VllmConfig._set_cudagraph_sizes (the
    formula is repeated in vllm/config/compilation.py, max_cudagraph_capture_size):
    [1, 2, 4] (those <= max) + range(8, min(max + 1, 256), 8) when max >= 8
    + range(256, max + 1, 16) when max >= 256. vLLM's own default max is
    min(max_num_seqs * 2, 512); here the caller names it.
    """
    sizes = [i for i in (1, 2, 4) if i <= max_size]
    if max_size >= 8:
        sizes += range(8, min(max_size + 1, 256), 8)
    if max_size >= 256:
        sizes += range(256, max_size + 1, 16)
    return sizes


def sglang_capture_sizes(max_size: int) -> list[int]:
    """SGLang's default CUDA-graph batch sizes up to `max_size` (no speculative decoding,
    padding on).

    From sgl-project/sglang, python/sglang/srt/server_args.py,
    ServerArgs._generate_cuda_graph_batch_sizes, the "normal case":
    [1, 2, 4, 8, 12] + range(16, 257, 8) + range(272, 512, 16) + range(512, max + 1, 32),
    then only those <= max (SGLang's --cuda-graph-max-bs).
    """
    sizes = ([1, 2, 4, 8, 12] + list(range(16, 257, 8)) + list(range(272, 512, 16))
             + list(range(512, max_size + 1, 32)))
    return [s for s in sizes if s <= max_size]


PRESETS: dict[str, Callable[[int], list[int]]] = {
    "vllm": vllm_capture_sizes,
    "sglang": sglang_capture_sizes,
}


# --- bucket lists --------------------------------------------------------------------------

@dataclass(frozen=True)
class Buckets(Sequence[int]):
    """The capacities a workload is captured at, ascending, and how sizes map onto them.

    `powers` is True for a power-of-two range (lower edge of class c is c/2+1), False for a
    bucket list (lower edge of a bucket is the previous bucket + 1, of the first one 1)."""

    capacities: tuple[int, ...]
    powers: bool
    text: str

    def __len__(self) -> int:
        return len(self.capacities)

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[int, ...]: ...
    def __getitem__(self, index: int | slice) -> int | tuple[int, ...]:
        return self.capacities[index]

    def __iter__(self) -> Iterator[int]:
        return iter(self.capacities)

    @property
    def largest(self) -> int:
        return self.capacities[-1]

    def capacity_of(self, n: int) -> int:
        """The smallest capacity >= n; InputError naming the largest when n is above it."""
        if n < 0:
            raise InputError(f"size {n} is negative", hint="sizes are element counts >= 0")
        i = bisect.bisect_left(self.capacities, n)
        if i == len(self.capacities):
            raise InputError(f"size {n:,} is above the largest bucket {self.largest:,} of "
                             f"{_shown(self.text)}",
                             hint="add a larger bucket or raise the maximum")
        return self.capacities[i]

    def lower_edge(self, capacity: int) -> int:
        """The smallest n this capacity is used for."""
        if self.powers:
            return lower_edge(capacity)
        i = self._index(capacity)
        return 1 if i == 0 else self.capacities[i - 1] + 1

    def sample_sizes(self, capacity: int, samples: int, seed: int) -> list[int]:
        """Lower edge, upper edge and seeded sizes between, for verifying one capacity."""
        return sample_sizes(capacity, samples, seed, lower=self.lower_edge(capacity))

    def _index(self, capacity: int) -> int:
        i = bisect.bisect_left(self.capacities, capacity)
        if i == len(self.capacities) or self.capacities[i] != capacity:
            raise ValueError(f"{capacity} is not one of the capacities of {self.text!r}")
        return i


_FORMS = "write LO..HI (2^0..2^20), an ascending list (1,2,4,8,16) or vllm:MAX / sglang:MAX"


def parse_buckets(text: str) -> Buckets:
    """A class range, an ascending bucket list or an engine preset; InputError (one line)
    for anything else."""
    raw = str(text).strip()
    if ".." in raw:
        return Buckets(tuple(_parse_range(raw)), True, raw)
    if ":" in raw:
        return Buckets(tuple(_parse_preset(raw)), False, raw)
    return Buckets(tuple(_parse_list(raw)), False, raw)


def parse_classes(text: str) -> list[int]:
    """The ascending capacities of what `--classes` takes (see parse_buckets)."""
    return list(parse_buckets(text).capacities)


def _parse_range(text: str) -> list[int]:
    """`LO..HI` -> every power-of-two capacity from class_of(LO) to class_of(HI)."""
    lo_text, _, hi_text = text.partition("..")
    if not lo_text.strip() or not hi_text.strip():
        raise InputError(f"class range {_shown(text)} is malformed", hint=_FORMS)
    lo, hi = parse_size(lo_text), parse_size(hi_text)
    if lo > hi:
        raise InputError(f"class range {_shown(text)} runs backwards ({lo} > {hi})")
    out, cap = [], class_of(lo)
    while cap <= class_of(hi):
        out.append(cap)
        cap <<= 1
    return out


def _parse_preset(text: str) -> list[int]:
    name, _, max_text = text.partition(":")
    key = name.strip().lower()
    if key not in PRESETS:
        raise InputError(f"unknown bucket preset {_shown(name.strip())} in {_shown(text)}",
                         hint=f"presets: {', '.join(f'{p}:MAX' for p in PRESETS)}")
    if not max_text.strip():
        raise InputError(f"bucket preset {_shown(text)} has no maximum",
                         hint=f"write {key}:MAX, e.g. {key}:256")
    top = parse_size(max_text)
    if top > MAX_PRESET:
        raise InputError(f"bucket preset {_shown(text)}: maximum {top:,} is above {MAX_PRESET:,}",
                         hint="engines capture far fewer sizes; give an explicit list instead")
    sizes = PRESETS[key](top)
    if not sizes:
        raise InputError(f"bucket preset {_shown(text)} has no bucket (maximum {top} < 1)")
    return sizes


def _parse_list(text: str) -> list[int]:
    parts = [p.strip() for p in text.split(",")]
    if parts and parts[-1] == "" and len(parts) > 1:
        parts.pop()  # a trailing comma, as in "8,"
    if not text or any(p == "" for p in parts):
        raise InputError(f"classes {_shown(text)} are malformed", hint=_FORMS)
    sizes = [parse_size(p) for p in parts]
    for prev, cur in zip(sizes, sizes[1:], strict=False):
        if cur <= prev:
            raise InputError(f"bucket list {_shown(text)} is not ascending ({prev:,} then {cur:,})",
                             hint="list each bucket once, smallest first")
    if sizes[0] < 1:
        raise InputError(f"bucket list {_shown(text)} has a bucket of 0",
                         hint="buckets are batch sizes >= 1")
    return sizes

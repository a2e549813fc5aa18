"""`join`: inner hash join of u32 keys, arity 1 (one column) or 2 (two columns together).

One recording: memset the table empty, build it from the build side (atomicCAS, open
addressing), count matches per probe row, exclusive-scan the counts (`ScanPlan`), scatter
(probe row, build row) pairs. n is the number of probe rows; the probe side has its own
capacity class (the class capacity) and so does the output (`output_capacity`).

The build side is fixed by options, not by n: `build_rows` rows holding
ceil(build_rows / duplicates) distinct keys, each repeated `duplicates` times (the last one
possibly fewer), shuffled. No build key occurs more than `duplicates` times, so no probe row
matches more than `duplicates` build rows and

    matches(n) <= n * duplicates <= capacity * duplicates,

hence the output capacity class is class_of(capacity * duplicates). Probe keys hit a build
key with probability `hit_rate`; for arity 2 half the misses share the first column with a
build key, so a kernel comparing one column only would be caught.

Outputs: `pairs` (matches x 2, compared as a multiset: the atomics make the order vary) and
`matches` (the count, one u32).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphcert.workloads import memo
from graphcert.workloads.base import SizeParam, Tolerance
from graphcert.workloads.scan import ScanPlan, scan_kernel_count, scan_size_params

if TYPE_CHECKING:
    from graphcert.cuda.context import RunContext
    from graphcert.cuda.memory import DeviceBuffer
    from graphcert.cuda.module import Kernel, PreparedLaunch
    from graphcert.cuda.stream import Stream

JOIN_SOURCE = "join.cu"
INPUT_SALT = 0x701
_BLOCK = 256
_MAX_OUTPUT = 2**31  # pair indices are u32 on the device


def class_of(n: int) -> int:
    """Smallest power of two >= max(n, 1): the capacity class of n."""
    return 1 << max(int(n) - 1, 0).bit_length()


def output_capacity(capacity: int, duplicates: int) -> int:
    """Pairs the output holds for a probe class: class_of of the bound capacity * duplicates."""
    return class_of(capacity * duplicates)


def table_slots(build_rows: int) -> int:
    """Hash table size: a power of two at least twice the build rows (load factor <= 1/2)."""
    return class_of(2 * build_rows)


def make_inputs(rng: np.random.Generator, capacity: int, *, arity: int, build_rows: int,
                duplicates: int, hit_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """(build keys (arity, build_rows), probe keys (arity, capacity)), both u32."""
    distinct = -(-build_rows // duplicates)
    keys = _distinct_keys(rng, distinct, arity)                      # (arity, distinct)
    which = np.repeat(np.arange(distinct), duplicates)[:build_rows]  # each key <= duplicates
    build = keys[:, rng.permutation(which)]
    probe = rng.integers(0, 2**32, size=(arity, capacity), dtype=np.uint32)  # misses
    hit = rng.random(capacity) < hit_rate
    probe[:, hit] = keys[:, rng.integers(0, distinct, size=int(hit.sum()))]
    if arity == 2:  # near misses: first column of a build key, second column random
        near = ~hit & (rng.random(capacity) < 0.5)
        probe[0, near] = keys[0, rng.integers(0, distinct, size=int(near.sum()))]
    return build, probe


def _distinct_keys(rng: np.random.Generator, count: int, arity: int) -> np.ndarray:
    bits = 32 * arity
    found = np.zeros(0, dtype=np.uint64)
    while found.size < count:  # collisions are rare; draw again until enough are distinct
        draw = rng.integers(0, 2**bits, size=2 * count, dtype=np.uint64)
        found = np.unique(np.concatenate([found, draw]))
    chosen = rng.permutation(found)[:count]
    if arity == 1:
        return chosen.astype(np.uint32)[None, :]
    return np.stack([(chosen >> np.uint64(32)).astype(np.uint32),
                     (chosen & np.uint64(0xFFFFFFFF)).astype(np.uint32)])


def _combined(keys: np.ndarray) -> np.ndarray:
    """One u64 per row, equal exactly when every key column is equal."""
    if keys.shape[0] == 1:
        return keys[0].astype(np.uint64)
    return (keys[0].astype(np.uint64) << np.uint64(32)) | keys[1].astype(np.uint64)


def join_reference(build: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """All (probe row, build row) pairs with equal keys, duplicates included, as (m, 2) u32,
    ordered by probe row, then build row."""
    return join_prefix_reference(build, probe)[0]


def join_prefix_reference(build: np.ndarray,
                          probe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(pairs, ends): join_reference(build, probe), and ends[i] = the pairs of probe rows < i.

    Pairs come ordered by probe row, so join_reference(build, probe[:, :n]) is exactly
    pairs[:ends[n]]: one join at the class capacity answers every n of the class."""
    bkeys, pkeys = _combined(build), _combined(probe)
    order = np.argsort(bkeys, kind="stable")  # equal keys keep build-row order
    sorted_keys = bkeys[order]
    lo = np.searchsorted(sorted_keys, pkeys, side="left")
    counts = np.searchsorted(sorted_keys, pkeys, side="right") - lo
    ends = np.zeros(pkeys.size + 1, dtype=np.int64)
    np.cumsum(counts, out=ends[1:])
    total = int(ends[-1])
    pairs = np.empty((total, 2), dtype=np.uint32)
    pairs[:, 0] = np.repeat(np.arange(pkeys.size, dtype=np.uint32), counts)
    # The build row of pair k is order[lo[row] + (k - ends[row])]: one repeat of the offsets.
    within = np.arange(total, dtype=np.int64) + np.repeat(lo - ends[:-1], counts)
    pairs[:, 1] = order[within]
    return pairs, ends


def join_inputs(seed: int, capacity: int, *, arity: int, build_rows: int, duplicates: int,
                hit_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """make_inputs from the seed alone (cached, read-only): what setup uploads."""
    return memo.cached(
        ("join.inputs", seed, capacity, arity, build_rows, duplicates, hit_rate),
        lambda: make_inputs(np.random.default_rng([seed, INPUT_SALT]), capacity, arity=arity,
                            build_rows=build_rows, duplicates=duplicates, hit_rate=hit_rate))


class Join:
    """Inner hash join; see the module docstring for the inputs and the output bound."""

    name = "join"
    description = "inner hash join of u32 keys (arity 1 or 2): build, probe, scan, scatter"
    kernel_files: tuple[str, ...] = (JOIN_SOURCE, "scan.cu")
    tolerance = Tolerance(unordered=("pairs",))

    def __init__(self, arity: int = 1, build_rows: int = 4096, duplicates: int = 2,
                 hit_rate: float = 0.5):
        if arity not in (1, 2):
            raise ValueError(f"arity must be 1 or 2, got {arity}")
        if not 1 <= build_rows <= 2**24:
            raise ValueError(f"build_rows must be in 1..{2**24}, got {build_rows}")
        if duplicates < 1:
            raise ValueError(f"duplicates must be at least 1, got {duplicates}")
        if not 0.0 <= hit_rate <= 1.0:
            raise ValueError(f"hit_rate must be in [0, 1], got {hit_rate}")
        self.arity = int(arity)
        self.build_rows = int(build_rows)
        self.duplicates = int(duplicates)
        self.hit_rate = float(hit_rate)
        self._capacity = 0  # 0 until setup
        self._seed = 0
        self._build: np.ndarray | None = None
        self._probe: np.ndarray | None = None
        self._prefix: tuple[np.ndarray, np.ndarray] | None = None
        self._bufs: dict[str, DeviceBuffer] = {}
        self._plan: ScanPlan | None = None
        self._kernels: tuple[Kernel, Kernel, Kernel] | None = None  # build, count, scatter
        self._cached: tuple[int, list[PreparedLaunch]] | None = None

    @property
    def size_params(self) -> tuple[SizeParam, ...]:
        """Every parameter holding n (scale 1) in the graph of the class set up last; the
        build kernel's row count is an option, not n."""
        return (SizeParam("join_count", 2), SizeParam("join_scatter", 2),
                *scan_size_params(self._capacity or None))

    def predict(self, capacity: int) -> dict[str, int]:
        # build + count + scatter, the scan of the counts, and the memset clearing the table
        return {"kernel": 3 + scan_kernel_count(capacity), "memset": 1}

    def output_capacity(self, capacity: int) -> int:
        return output_capacity(capacity, self.duplicates)

    def bytes_needed(self, capacity: int) -> int:
        keys = 4 * self.arity * (self.build_rows + capacity)
        return (keys + 4 * table_slots(self.build_rows) + 8 * capacity + 4
                + 8 * self.output_capacity(capacity) + ScanPlan.bytes_needed(capacity))

    def setup(self, ctx: RunContext, capacity: int) -> None:
        out_capacity = self.output_capacity(capacity)
        if out_capacity > _MAX_OUTPUT:
            raise ValueError(f"join output class {out_capacity} exceeds {_MAX_OUTPUT} pairs")
        self._capacity = capacity
        self._build, self._probe = join_inputs(
            ctx.seed, capacity, arity=self.arity, build_rows=self.build_rows,
            duplicates=self.duplicates, hit_rate=self.hit_rate)
        self._seed = ctx.seed
        self._prefix = None
        b = self._bufs
        b["build0"] = ctx.upload(self._build[0])
        b["build1"] = ctx.upload(self._build[1]) if self.arity == 2 else b["build0"]
        b["probe0"] = ctx.upload(self._probe[0])
        b["probe1"] = ctx.upload(self._probe[1]) if self.arity == 2 else b["probe0"]
        b["slots"] = ctx.alloc(4 * table_slots(self.build_rows))
        b["counts"] = ctx.alloc(4 * capacity)
        b["offsets"] = ctx.alloc(4 * capacity)
        # Poisoned, so a run that writes nothing cannot pass on a previous run's answer.
        b["total"] = ctx.upload(np.full(1, 0xDEADBEEF, dtype=np.uint32))
        b["pairs"] = ctx.upload(np.full(2 * out_capacity, 0xDEADBEEF, dtype=np.uint32))
        self._plan = ScanPlan(ctx, capacity)
        self._kernels = (ctx.kernel(JOIN_SOURCE, "join_build"),
                         ctx.kernel(JOIN_SOURCE, "join_count"),
                         ctx.kernel(JOIN_SOURCE, "join_scatter"))
        self._cached = None

    def record(self, stream: Stream, n: int) -> None:
        assert self._plan is not None
        b = self._bufs
        slots = table_slots(self.build_rows)
        b["slots"].memset_u32_async(0xFFFFFFFF, slots, stream)  # every slot EMPTY
        build, count, scatter = self._launches(n)
        build.launch(stream)
        count.launch(stream)
        self._plan.record(stream, b["counts"], b["offsets"], n)
        scatter.launch(stream)

    def _launches(self, n: int) -> list[PreparedLaunch]:
        """The three join launches for n, packed once per n."""
        if not 0 <= n <= self._capacity:
            raise ValueError(f"join of n={n} probe rows does not fit capacity {self._capacity}")
        if self._cached is not None and self._cached[0] == n:
            return self._cached[1]
        assert self._kernels is not None
        build_k, count_k, scatter_k = self._kernels
        b = self._bufs
        mask = np.uint32(table_slots(self.build_rows) - 1)
        arity, n32 = np.uint32(self.arity), np.uint32(n)
        probe_grid = -(-self._capacity // _BLOCK)  # from capacity: same graph for every n
        table = (b["build0"], b["build1"], b["slots"], mask)
        launches = [
            build_k.prepare(-(-self.build_rows // _BLOCK), _BLOCK, b["build0"], b["build1"],
                            np.uint32(self.build_rows), arity, b["slots"], mask),
            count_k.prepare(probe_grid, _BLOCK, b["probe0"], b["probe1"], n32, arity, *table,
                            b["counts"]),
            scatter_k.prepare(probe_grid, _BLOCK, b["probe0"], b["probe1"], n32, arity, *table,
                              b["offsets"], b["counts"], b["pairs"],
                              np.uint32(self.output_capacity(self._capacity)), b["total"]),
        ]
        self._cached = (n, launches)
        return launches

    def outputs(self, n: int) -> dict[str, np.ndarray]:
        b = self._bufs
        total = b["total"].download(np.uint32, 1)
        # A broken count must not turn into a huge download: clamp, and let the compare fail.
        shown = min(int(total[0]), self.output_capacity(self._capacity))
        pairs = b["pairs"].download(np.uint32, 2 * shown).reshape(shown, 2)
        return {"pairs": pairs, "matches": total}

    def reference(self, n: int) -> dict[str, np.ndarray]:
        assert self._build is not None and self._probe is not None
        if self._prefix is None:  # once per class: every n is a prefix of it
            build, probe = self._build, self._probe
            self._prefix = memo.cached(
                ("join.reference", self._seed, self._capacity, self.arity, self.build_rows,
                 self.duplicates, self.hit_rate), lambda: join_prefix_reference(build, probe))
        pairs, ends = self._prefix
        total = int(ends[n])
        return {"pairs": pairs[:total], "matches": np.array([total], dtype=np.uint32)}

    def teardown(self) -> None:
        if self._plan is not None:
            self._plan.free()
        for buf in self._bufs.values():
            buf.free()  # idempotent, so the aliased arity-1 key columns are fine
        self._bufs = {}
        self._plan = None
        self._kernels = None
        self._cached = None
        self._build = self._probe = None
        self._prefix = None


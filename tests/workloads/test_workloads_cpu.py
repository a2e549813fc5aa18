"""CPU tier for the built-in workloads: kernels compile, predictions, references, loading, CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from graphcert.cli import cli
from graphcert.errors import InputError
from graphcert.paths import kernels_dir
from graphcert.workloads import registry
from graphcert.workloads.chain import Chain
from graphcert.workloads.join import (
    Join,
    class_of,
    join_reference,
    make_inputs,
    output_capacity,
    table_slots,
)
from graphcert.workloads.resident import Resident
from graphcert.workloads.scan import (
    SCAN_BLOCK,
    SCAN_TILES,
    Scan,
    exclusive_scan,
    scan_kernel_count,
    scan_levels,
    scan_size_params,
)

ROOT = Path(__file__).resolve().parents[2]
MINE = ("scan", "join", "chain", "resident")


# --- kernels -----------------------------------------------------------------------------

# Every kernel's NVRTC compile is tested once, in tests/workloads/test_nvrtc_cache.py.


def _kernel_params(source: str) -> dict[str, list[str]]:
    """{kernel name: parameter names} of every extern "C" __global__ entry in a source."""
    found = {}
    pattern = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?'
                         r"(\w+)\s*\(([^)]*)\)", re.S)
    for name, params in pattern.findall(source):
        found[name] = [p.split()[-1].lstrip("*") for p in params.split(",") if p.strip()]
    return found


@pytest.mark.parametrize("workload", [Scan(), Join(), Join(arity=2), Resident(), Chain()],
                         ids=lambda w: w.name)
def test_size_params_point_at_n(workload: object) -> None:
    params: dict[str, list[str]] = {}
    for source in workload.kernel_files:  # type: ignore[attr-defined]
        params.update(_kernel_params((kernels_dir() / source).read_text()))
    for sp in workload.size_params:  # type: ignore[attr-defined]
        assert sp.kernel in params, f"{sp.kernel} is not a kernel of {workload}"
        assert params[sp.kernel][sp.index] == "n", (sp, params[sp.kernel])
        assert sp.scale == 1
    # every kernel with an `n` parameter is listed: an unlisted one would keep a stale n
    listed = {sp.kernel for sp in workload.size_params}  # type: ignore[attr-defined]
    assert {k for k, names in params.items() if "n" in names} == listed


def test_scan_size_params_name_only_kernels_the_class_has() -> None:
    assert {p.kernel for p in scan_size_params(1)} == {"scan_single_block"}
    assert {p.kernel for p in scan_size_params(256)} == {"scan_single_block"}
    everything = {"scan_block_sums", "scan_single_block", "scan_add_offsets"}
    assert {p.kernel for p in scan_size_params(257)} == everything
    assert {p.kernel for p in scan_size_params(None)} == everything


def test_example_saxpy_size_param_points_at_n() -> None:
    ref = str(ROOT / "examples" / "cuda_core_saxpy.py") + ":Saxpy"
    saxpy = registry.load(ref).native().workload
    module = sys.modules[type(saxpy).__module__]
    params = _kernel_params(module.SOURCE)
    (sp,) = saxpy.size_params
    assert params[sp.kernel][sp.index] == "n"


# --- scan ----------------------------------------------------------------------------------

def test_scan_constants_agree_with_the_kernel_source() -> None:
    source = (kernels_dir() / "scan.cu").read_text()
    defined = dict(re.findall(r"#define (SCAN_BLOCK|SCAN_TILES) (\d+)u", source))
    assert defined == {"SCAN_BLOCK": str(SCAN_BLOCK), "SCAN_TILES": str(SCAN_TILES)}
    assert SCAN_TILES % 4 == 0  # the kernels move 4 elements per thread per chunk


@pytest.mark.parametrize(("length", "kernels"), [
    (0, 0), (1, 1), (2, 1), (255, 1), (256, 1), (257, 3), (512, 3), (65535, 3), (65536, 3),
    (65537, 5), (2**22, 5), (2**24, 5), (2**24 + 1, 7), (2**26, 7), (2**32, 7),
])
def test_scan_kernel_count(length: int, kernels: int) -> None:
    assert scan_kernel_count(length) == kernels


def test_scan_levels_match_the_issue() -> None:
    assert scan_levels(0) == []
    assert scan_levels(256) == [256]
    assert scan_levels(257) == [257, 2]
    assert scan_levels(65537) == [65537, 257, 2]
    assert Scan().predict(65537) == {"kernel": 5}
    assert Scan().predict(1) == {"kernel": 1}


def test_exclusive_scan_reference_is_shifted_cumsum() -> None:
    rng = np.random.default_rng(1)
    for n in (0, 1, 2, 255, 1000):
        x = rng.integers(0, 2**32, size=n, dtype=np.uint32)
        want = np.concatenate([[0], np.cumsum(x.astype(object))[:-1]]) if n else np.zeros(0)
        want = np.array([int(v) % 2**32 for v in want], dtype=np.uint32)
        got = exclusive_scan(x)
        assert got.dtype == np.uint32 and got.shape == (n,)
        assert np.array_equal(got, want)
    wrapped = exclusive_scan(np.array([2**32 - 1, 2, 5], dtype=np.uint32))
    assert wrapped.tolist() == [0, 2**32 - 1, 1]


def _emulate_device_scan(x: np.ndarray, capacity: int, n: int) -> np.ndarray:
    """The kernels' algorithm step by step (block 256, per-level length from n, blocks past
    it skipped), reading only what the device would read: poison anywhere else shows up."""
    poison = np.uint32(0xDEADBEEF)
    levels = scan_levels(capacity)
    top = len(levels) - 1
    data = [x.copy()] + [np.full(length, poison, dtype=np.uint32) for length in levels[1:]]
    out = np.full(capacity, poison, dtype=np.uint32)

    def length(level: int) -> int:
        return -(-n // SCAN_BLOCK**level)

    for level in range(top):
        for block in range(-(-levels[level] // SCAN_BLOCK)):
            lo = block * SCAN_BLOCK
            if lo >= length(level):
                continue
            chunk = data[level][lo:min(lo + SCAN_BLOCK, length(level))]
            assert poison not in chunk or level == 0
            data[level + 1][block] = np.uint32(int(chunk.astype(np.uint64).sum()) % 2**32)
    assert length(top) <= SCAN_BLOCK
    top_in = data[top][:length(top)]
    top_out = out if top == 0 else data[top]
    top_out[:length(top)] = exclusive_scan(top_in)
    for level in reversed(range(top)):
        dst = out if level == 0 else data[level]
        src = data[level].copy()
        for block in range(-(-levels[level] // SCAN_BLOCK)):
            lo = block * SCAN_BLOCK
            if lo >= length(level):
                continue
            hi = min(lo + SCAN_BLOCK, length(level))
            offset = data[level + 1][block]
            assert offset != poison or n == 0
            dst[lo:hi] = exclusive_scan(src[lo:hi]) + offset
    return out[:n]


@pytest.mark.parametrize(("capacity", "n"), [
    (1, 0), (1, 1), (256, 255), (512, 257), (512, 300), (65536, 65535), (131072, 65537),
    (131072, 1), (131072, 0), (2**18, 2**18),
])
def test_scan_algorithm_emulated(capacity: int, n: int) -> None:
    x = np.random.default_rng(capacity + n).integers(0, 2**32, size=capacity, dtype=np.uint32)
    x[n:] = 0xDEADBEEF  # elements past n must never influence anything
    assert np.array_equal(_emulate_device_scan(x, capacity, n), exclusive_scan(x[:n]))


# --- join ----------------------------------------------------------------------------------

def test_class_of_and_output_capacity_bound() -> None:
    assert [class_of(v) for v in (0, 1, 2, 3, 255, 256, 257)] == [1, 1, 2, 4, 256, 256, 512]
    assert output_capacity(1, 2) == 2
    assert output_capacity(256, 2) == 512
    assert output_capacity(257, 2) == 1024  # the probe class is 512 in practice; any n works
    assert output_capacity(2**22, 3) == 2**24
    for cap in (1, 64, 1024, 2**20):
        for dup in (1, 2, 3, 5):
            assert output_capacity(cap, dup) >= cap * dup
    assert table_slots(4096) == 8192 and table_slots(3) == 8
    assert Join(duplicates=3).output_capacity(1024) == 4096


def _brute_force(build: np.ndarray, probe: np.ndarray) -> list[tuple[int, int]]:
    pairs = []
    for i in range(probe.shape[1]):
        for j in range(build.shape[1]):
            if all(build[c, j] == probe[c, i] for c in range(build.shape[0])):
                pairs.append((i, j))
    return sorted(pairs)


@pytest.mark.parametrize("arity", [1, 2])
def test_join_reference_matches_brute_force(arity: int) -> None:
    rng = np.random.default_rng(arity)
    build, probe = make_inputs(rng, 200, arity=arity, build_rows=50, duplicates=3, hit_rate=0.6)
    got = join_reference(build, probe)
    assert got.dtype == np.uint32 and got.ndim == 2 and got.shape[1] == 2
    assert sorted(map(tuple, got.tolist())) == _brute_force(build, probe)
    assert got.shape[0] > 0


def test_join_reference_edges() -> None:
    build = np.array([[7, 7, 9, 2**32 - 1]], dtype=np.uint32)
    assert join_reference(build, np.zeros((1, 0), dtype=np.uint32)).shape == (0, 2)
    probe = np.array([[7, 1, 2**32 - 1, 9]], dtype=np.uint32)
    assert sorted(map(tuple, join_reference(build, probe).tolist())) == [
        (0, 0), (0, 1), (2, 3), (3, 2)]


@pytest.mark.parametrize("arity", [1, 2])
@pytest.mark.parametrize("duplicates", [1, 2, 4])
def test_join_inputs_respect_the_bound(arity: int, duplicates: int) -> None:
    capacity = 4096
    rng = np.random.default_rng(duplicates)
    build, probe = make_inputs(rng, capacity, arity=arity, build_rows=1000,
                               duplicates=duplicates, hit_rate=1.0)
    assert build.shape == (arity, 1000) and probe.shape == (arity, capacity)
    _, multiplicity = np.unique(build, axis=1, return_counts=True)
    assert multiplicity.max() == duplicates  # duplicates really present, never more
    for n in (0, 1, 1000, capacity):
        matches = join_reference(build, probe[:, :n]).shape[0]
        assert matches <= n * duplicates <= output_capacity(capacity, duplicates)
    # every probe row hits at hit_rate=1, each with `duplicates` rows (the last key fewer)
    assert join_reference(build, probe).shape[0] >= capacity


def test_join_arity2_has_near_misses() -> None:
    build, probe = make_inputs(np.random.default_rng(5), 2000, arity=2, build_rows=256,
                               duplicates=2, hit_rate=0.0)
    first_col_hits = np.isin(probe[0], build[0]).sum()
    assert first_col_hits > 0  # the first column alone would match...
    assert join_reference(build, probe).shape[0] < first_col_hits  # ...the pair does not


def test_join_predict() -> None:
    assert Join().predict(1) == {"kernel": 4, "memset": 1}
    assert Join(arity=2).predict(65537) == {"kernel": 8, "memset": 1}


# --- chain, resident -----------------------------------------------------------------------

def test_chain_and_resident_predict_and_reference() -> None:
    assert Chain().predict(1) == {"kernel": 16}
    chain = Chain(kernels=1000)
    assert chain.predict(2**20) == {"kernel": 1000}
    assert chain.reference(5)["marks"].tolist() == list(range(1, 1001))
    assert Resident().predict(4096) == {"kernel": 1, "memcpy": 2, "memset": 1}


# --- loading -------------------------------------------------------------------------------

@pytest.mark.parametrize("ref", ["scan", "join", "join[arity=2,build_rows=100,duplicates=3]",
                                 "chain", "chain[kernels=1000]", "resident"])
def test_registry_constructs_builtins(ref: str) -> None:
    workload = registry.load(ref).native().workload
    assert workload.name == registry.parse_ref(ref).target
    assert workload.kernel_files == registry.BUILTINS[workload.name].kernel_files


def test_constructors_import_no_cuda() -> None:
    code = ("import sys\n"
            "from graphcert.workloads import registry\n"
            f"for name in {MINE!r}: registry.load(name)\n"
            "from click.testing import CliRunner\n"
            "from graphcert.cli import cli\n"
            "assert CliRunner().invoke(cli, ['workloads', '--json']).exit_code == 0\n"
            "print(sorted(m for m in sys.modules if m == 'cuda' or m.startswith('cuda.')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.parametrize(("ref", "fragment"), [
    ("join[arity=3]", "arity must be 1 or 2"),
    ("chain[kernels=0]", "kernels must be in"),
    ("chain[blocks=3]", "cannot construct"),
])
def test_bad_options_are_one_line_input_errors(ref: str, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        registry.load(ref)
    assert fragment in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("ref", ["examples/cuda_core_saxpy.py:Saxpy",
                                 "examples/cuda_core_saxpy.py:Saxpy[a=0.5]",
                                 "examples/cupy_scan.py:CupyScan"])
def test_examples_load_without_a_gpu(ref: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    workload = registry.load(ref).native().workload
    for attr in ("setup", "record", "outputs", "reference", "teardown"):
        assert callable(getattr(workload, attr))


@pytest.mark.parametrize(("ref", "fragment"), [
    ("examples/missing.py:Saxpy", "does not exist"),
    ("examples/cuda_core_saxpy.py:Nope", "no object named 'Nope'"),
    ("examples/cuda_core_saxpy.py:Saxpy[b=1]", "cannot construct"),
    ("~nouser-graphcert-test/w.py:W", "its home folder is unknown"),  # expanduser raised
])
def test_example_loader_errors(ref: str, fragment: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    with pytest.raises(InputError) as info:
        registry.load(ref)
    message = str(info.value)
    assert fragment in message and "\n" not in message


# --- CLI -----------------------------------------------------------------------------------

def test_workloads_json() -> None:
    result = CliRunner().invoke(cli, ["workloads", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)["workloads"]}
    assert set(rows) == set(registry.BUILTINS)
    for name in MINE:
        assert rows[name]["kernel_files"] == list(registry.BUILTINS[name].kernel_files)
        assert rows[name]["description"] == registry.BUILTINS[name].description
    assert rows["join"]["kernel_files"] == ["join.cu", "scan.cu"]


def test_workloads_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    result = CliRunner().invoke(cli, ["workloads"])  # its console reads COLUMNS when made
    assert result.exit_code == 0, result.output
    for name in MINE:
        assert name in result.stdout
    assert "join.cu, scan.cu" in result.stdout

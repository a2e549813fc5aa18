"""Kernel names: demangled in full for `--tree`, short in tables, raw in JSON and hashes.

The mangled inputs are real Itanium-ABI strings, not typed by hand: they were produced by
compiling a small C++ file that declares the same templates as PyTorch's ATen kernels
(`at::native::vectorized_elementwise_kernel<4, FillFunctor<float>, Array<char*, 1>>`, a
layer-norm kernel in an anonymous namespace, an elementwise kernel over a lambda) with
`g++ -c k.cpp` and reading the symbols with `nm k.o`. nvcc mangles `__global__` functions
with the same ABI. `nvjet_hsh_64x8_64x16_2x1_v_bz_TNN` is the form of cuBLAS's `extern "C"`
GEMM kernel names seen in a PyTorch capture on the H100 (shared/DEVICE_FACTS.md).
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from graphcert.model import NodeKind, RawGraph, RawNode, snapshot_from_raw, snapshot_to_json
from graphcert.render.inventory import render_inventory
from graphcert.render.names import demangle, short_name

FILL = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail"
        "5ArrayIPcLi1EEEEEviT0_T1_")
LAYER_NORM = ("_ZN2at6native12_GLOBAL__N_128vectorized_layer_norm_kernelIffEEviT0_PKT_S6_S6_"
              "PS3_S7_PS4_")
LAMBDA = "_ZN2at6native18elementwise_kernelIZNS0_15add_kernel_cudaEvEUlffE_EEviT_"
NVJET = "nvjet_hsh_64x8_64x16_2x1_v_bz_TNN"

CASES = [
    (FILL,
     "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
     "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
     "at::detail::Array<char*, 1>)",
     "at::native::vectorized_elementwise_kernel<\u2026FillFunctor\u2026>"),
    (LAYER_NORM,
     "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"
     "(int, float, float const*, float const*, float const*, float*, float*, float*)",
     "at::native::(anon)::vectorized_layer_norm_kernel<\u2026>"),
    (LAMBDA,
     "void at::native::elementwise_kernel<at::native::add_kernel_cuda()::"
     "{lambda(float, float)#1}>(int, at::native::add_kernel_cuda()::{lambda(float, float)#1})",
     "at::native::elementwise_kernel<\u2026add_kernel_cuda\u2026>"),
    ("_ZN2at6native15add_kernel_cudaEv", "at::native::add_kernel_cuda()",
     "at::native::add_kernel_cuda"),
    (NVJET, NVJET, NVJET),
    ("scan_block_sums", "scan_block_sums", "scan_block_sums"),
]


@pytest.mark.parametrize(("raw", "full", "short"), CASES)
def test_demangle_and_short_form(raw: str, full: str, short: str) -> None:
    assert demangle(raw) == full
    assert short_name(raw) == short


# PyTorch's kernels as recorded on the H100 (tests/fixtures/record): one template for GELU,
# add and fill, told apart only by the functor or the function holding the lambda.
TORCH_ELEMENTWISE = {
    "GeluCUDAKernelImpl": "_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_18GeluCUDAKern"
                          "elImplERNS_18TensorIteratorBaseENS0_8GeluTypeEENKUlvE0_clEvENKUlvE1_"
                          "clEvEUlN3c104HalfEE_St5arrayIPcLm2EEEEviT0_T1_",
    "CUDAFunctor_add": "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_15CUDAFunctor_addI"
                       "N3c104HalfEEESt5arrayIPcLm3EEEEviT0_T1_",
    "FillFunctor": "_ZN2at6native29vectorized_elementwise_kernelILi2ENS0_11FillFunctorIlEESt5arr"
                   "ayIPcLm1EEEEviT0_T1_",
}


def test_the_short_form_names_the_operation() -> None:
    """`vectorized_elementwise_kernel<…>` alone reads the same for three different kernels:
    the short form keeps the template argument that names each one's operation, and stays
    one token (no spaces) so a table or a wrapped line never breaks it."""
    shorts = {op: short_name(raw) for op, raw in TORCH_ELEMENTWISE.items()}
    assert len(set(shorts.values())) == 3, shorts
    for op, short in shorts.items():
        assert short == f"at::native::vectorized_elementwise_kernel<\u2026{op}\u2026>"
        assert " " not in short


@pytest.mark.parametrize("raw", ["_Z", "_Zgarbage", "_ZN2at6native", ""])
def test_a_name_that_does_not_demangle_is_shown_raw(raw: str) -> None:
    assert demangle(raw) == raw
    assert short_name(raw) == raw


def _torch_like_snapshot() -> object:
    """Synthetic graph (not a recording) carrying the real mangled names above."""
    def kern(i: int, name: str) -> RawNode:
        return RawNode(i, NodeKind.KERNEL, {"name": name, "grid": [8, 1, 1],
                                            "block": [128, 1, 1], "shared_mem_bytes": 0,
                                            "param_sizes": [8], "cooperative": False,
                                            "cluster_dim": [0, 0, 0], "priority": None})
    nodes = (kern(1, NVJET), kern(2, FILL), kern(3, LAYER_NORM))
    return snapshot_from_raw(RawGraph(nodes, ((1, 2), (2, 3))), meta={"synthetic": True})


def _shown(tree: bool) -> str:
    console = Console(width=120, color_system=None, force_terminal=False, file=io.StringIO(),
                      record=True)
    render_inventory(console, _torch_like_snapshot(), tree=tree)  # type: ignore[arg-type]
    return console.export_text()


def test_table_shows_short_names_one_row_each() -> None:
    text = _shown(tree=False)
    assert "at::native::vectorized_elementwise_kernel<\u2026FillFunctor\u2026>" in text
    assert "at::native::(anon)::vectorized_layer_norm_kernel<\u2026>" in text
    assert "_ZN2at" not in text and "FillFunctor<" not in text
    # header, rule, three nodes, summary lines: no name folded onto a second row
    assert sum(1 for line in text.splitlines() if "kernel" in line.split()[1:2]) == 3


def test_tree_shows_full_demangled_names() -> None:
    text = _shown(tree=True)
    assert "at::native::FillFunctor<float>" in text and "_ZN2at" not in text


def test_json_and_hash_keep_the_raw_name() -> None:
    doc = snapshot_to_json(_torch_like_snapshot())  # type: ignore[arg-type]
    names = {n["attrs"].get("name") for n in doc["nodes"]}
    assert FILL in names and LAYER_NORM in names


def test_names_read_from_real_pytorch_and_cupy_graphs() -> None:
    """The raw names of graphs read on an H100 (tests/fixtures/kernel_names/README.md): every
    mangled one demangles, and its short form keeps namespace and kernel, eliding the rest."""
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "kernel_names" /
                      "h100-torch-cupy.json").read_text())
    shorts = [short_name(n) for n in doc["torch_mlp_fp16_b8"]]
    assert shorts == ["nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT",
                      "at::native::vectorized_elementwise_kernel<\u2026GeluCUDAKernelImpl\u2026>",
                      "nvjet_sm90_hsh_8x64_64x16_4x1_v_bz_bias_TNN",
                      "at::native::(anon)::vectorized_layer_norm_kernel<\u2026>"]
    gelu = demangle(doc["torch_mlp_fp16_b8"][1])
    assert gelu.startswith("void at::native::vectorized_elementwise_kernel<8, "
                           "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
                           "at::native::GeluType)::")
    assert "c10::Half" in gelu
    assert demangle(doc["torch_mlp_fp16_b8"][3]).startswith(
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, "
        "float, false>(int, float, c10::Half const*")
    # CuPy's elementwise kernels are extern "C": shown as they are
    assert [short_name(n) for n in doc["cupy_elementwise"]] == doc["cupy_elementwise"]


def test_demangle_is_public_and_the_docs_example_prints_readable_names() -> None:
    """graphcert.demangle is the views' demangling, for API users; docs/python-api.md's
    snapshot example prints node names through it, never a raw `_Z...` name."""
    from pathlib import Path

    import graphcert

    assert graphcert.demangle(FILL) == demangle(FILL) != FILL
    assert graphcert.demangle(NVJET) == NVJET
    docs = (Path(__file__).resolve().parents[2] / "docs" / "python-api.md").read_text()
    assert "graphcert.demangle(node.name)" in docs

"""A bucket list written the way a serving engine takes it. Pure.

- vLLM: `--cudagraph-capture-sizes 1 2 4 8` (vLLM 0.11 on); `--cuda-graph-sizes 1 2 4 8`
  before it (deprecated since by vllm-project/vllm PR #26016, an alias until removed); or
  the compilation config `--compilation-config '{"cudagraph_capture_sizes": [1, 2, 4, 8]}'`,
  which both take;
- SGLang: `--cuda-graph-bs 1 2 4 8`;
- TensorRT-LLM: `cuda_graph_config` in the LLM API options file, with `enable_padding`
  (without it a batch only replays a graph of exactly its size, not the padding the plan
  assumes).

No graph at all is each engine's own switch (`--enforce-eager`, `--disable-cuda-graph`,
`cuda_graph_config: null`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import Enum


class Engine(Enum):
    VLLM = "vllm"
    VLLM_BEFORE_0_11 = "vllm<0.11"
    VLLM_CONFIG = "vllm-config"
    SGLANG = "sglang"
    TRTLLM = "trtllm"


def engine_args(buckets: Sequence[int], engine: Engine) -> str:
    """`buckets` (ascending) as `engine`'s option or configuration text."""
    sizes = [int(b) for b in buckets]
    spaced = " ".join(map(str, sizes))
    if engine in (Engine.VLLM, Engine.VLLM_BEFORE_0_11):
        flag = "--cudagraph-capture-sizes" if engine is Engine.VLLM else "--cuda-graph-sizes"
        return f"{flag} {spaced}" if sizes else "--enforce-eager"
    if engine is Engine.VLLM_CONFIG:
        if not sizes:
            return "--enforce-eager"
        return f"--compilation-config '{json.dumps({'cudagraph_capture_sizes': sizes})}'"
    if engine is Engine.SGLANG:
        return f"--cuda-graph-bs {spaced}" if sizes else "--disable-cuda-graph"
    if not sizes:
        return "cuda_graph_config: null"
    return f"cuda_graph_config: {{batch_sizes: {json.dumps(sizes)}, enable_padding: true}}"

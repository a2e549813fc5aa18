"""A PyTorch decode step (a pre-norm fp16 MLP block with a residual) over vLLM-style buckets.

    graphcert verify examples/steps/torch_decode.py:DECODE --classes vllm:64
    graphcert bench  examples/steps/torch_decode.py:DECODE --classes 8,16,64
    python examples/steps/torch_decode.py            # the same verify, printed

graphcert captures the step once per bucket with torch.cuda.graph (a private pool, warmed up
on a side stream), pads each sampled batch of n rows up to the bucket, replays, and compares
the first n rows with the eager call at n. Every row depends only on its own inputs, so
padding cannot change them; cuBLAS still picks other kernels per bucket (see the transitions).
PyTorch is imported only when the step runs.
"""

from __future__ import annotations

from typing import Any

import graphcert

HIDDEN = 256
FFN = 1024
_block: list[Any] = []


def block() -> Any:
    """The MLP block's weights, made once (seeded) on the current CUDA device."""
    if not _block:
        import torch

        torch.manual_seed(0)
        _block.append(torch.nn.Sequential(
            torch.nn.LayerNorm(HIDDEN), torch.nn.Linear(HIDDEN, FFN), torch.nn.GELU(),
            torch.nn.Linear(FFN, HIDDEN)).cuda().half().eval())
    return _block[0]


def decode_step(x: Any) -> Any:
    """One decode step for a batch of hidden states: x + MLP(LayerNorm(x)), row by row."""
    return x + block()(x)


def make_batch(n: int) -> tuple[Any]:
    """n hidden states (fp16), seeded by n."""
    import torch

    gen = torch.Generator(device="cuda").manual_seed(1000 + n)
    return (torch.randn(n, HIDDEN, device="cuda", dtype=torch.float16, generator=gen),)


# fp16: cuBLAS may pick another kernel (another summation order) at n than at the bucket
DECODE = graphcert.step(decode_step, make_batch, framework="torch", rtol=2e-2, atol=2e-2,
                        name="torch_decode")

if __name__ == "__main__":
    result = graphcert.verify_step(DECODE, "vllm:64")
    for t in result.transitions:
        print(f"bucket {t.frm} -> {t.to}: {t.change}")
    print(f"torch_decode over vllm:64: {result.verdict.status.value} "
          f"({len(result.classes)} buckets)")
    for why in result.verdict.reasons:
        print("  ", why)

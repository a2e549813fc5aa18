"""A deliberately unsafe PyTorch step: it centres the batch on its mean before an fp16 MLP,
so each row depends on every other row of the batch, the padded rows included once captured.
graphcert verify fails it naming the bucket, the size and the first wrong row
(tests/gpu/test_steps_gpu.py checks that).

    graphcert verify examples/steps/torch_unsafe.py:UNSAFE --classes 8,16 --no-certificate
"""

from __future__ import annotations

from typing import Any

import graphcert

HIDDEN = 128
_mlp: list[Any] = []


def mlp() -> Any:
    if not _mlp:
        import torch

        torch.manual_seed(0)
        _mlp.append(torch.nn.Sequential(torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.GELU())
                    .cuda().half().eval())
    return _mlp[0]


def unsafe_step(x: Any) -> Any:
    """x - mean over the batch (the padded rows too, in the graph), then the MLP."""
    centred = x - x.mean(dim=0, keepdim=True)
    return mlp()(centred)


def make_batch(n: int) -> tuple[Any]:
    import torch

    gen = torch.Generator(device="cuda").manual_seed(2000 + n)
    # offset from 0 so the zero padding moves the mean well beyond fp16 tolerance
    return (torch.randn(n, HIDDEN, device="cuda", dtype=torch.float16, generator=gen) + 3.0,)


UNSAFE = graphcert.step(unsafe_step, make_batch, framework="torch", rtol=2e-2, atol=2e-2,
                        name="torch_unsafe")

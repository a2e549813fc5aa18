"""torch.compile(mode="reduce-overhead") of a small MLP, recorded: PyTorch's CUDA-graph
trees capture and instantiate the graphs themselves; `graphcert record` sees them
without a change to this file.

    graphcert record -- python examples/record/compile_torch.py
"""

from __future__ import annotations

import argparse

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(),
                              torch.nn.Linear(1024, 512)).cuda().half().eval()
    step = torch.compile(net, mode="reduce-overhead")
    x = torch.randn(args.batch, 512, device="cuda", dtype=torch.float16)
    with torch.inference_mode():
        for _ in range(args.steps):
            y = step(x)
        torch.cuda.synchronize()
    print(f"compile_torch: {args.steps} steps at batch {args.batch}, out {tuple(y.shape)}")


if __name__ == "__main__":
    main()

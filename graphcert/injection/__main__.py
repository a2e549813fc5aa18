"""`python -m graphcert.injection`: build the collector (or reuse the cache) and print the
paths, for GPU smoke runs (`CUDA_INJECTION64_PATH=... LD_PRELOAD=...`)."""

from __future__ import annotations

import sys

from graphcert.injection.build import CollectorUnavailable, build


def main() -> int:
    """Print the built paths, one `name: path` line each; exit 2 with one line if none."""
    try:
        built = build()
    except CollectorUnavailable as exc:
        print(f"graphcert.injection: {exc.one_line()}", file=sys.stderr)
        return int(exc.exit_code)
    print(f"collector: {built.collector}")
    print(f"exit_hook: {built.exit_hook}")
    print(f"libcupti: {built.libcupti}")
    print(f"cupti_include: {built.cupti_include}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

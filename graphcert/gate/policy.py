"""The gate's policy: what it requires, read from TOML (a file or pyproject.toml) and checked
key by key. Pure and import-light."""

from __future__ import annotations

import difflib
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from graphcert.cert.registry import KIND_NAMES
from graphcert.cert.results.figures import QUANTITIES
from graphcert.errors import GraphcertError, clip_repr
from graphcert.fileread import MAX_POLICY_BYTES, FileProblem, read_bounded
from graphcert.jsontypes import JSONObject

T = TypeVar("T")  # a per-workload threshold: a table gives back the type its entries have


class PolicyError(GraphcertError):
    """A policy file that cannot be used (exit 2)."""


@dataclass(frozen=True)
class Policy:
    """What the gate requires. Per-workload values use a table with an optional '*'."""

    require: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    require_kinds: tuple[str, ...] = ()
    min_speedup: float | Mapping[str, float] | None = None
    speedup_metric: str = "end_to_end"
    max_nodes: int | Mapping[str, int] | None = None
    # a plan certificate's committed list may be at most this fraction slower per step than
    # the plan's optimum (0.05: 5%)
    max_plan_regret: float | Mapping[str, float] | None = None
    # a record certificate's: steady-state share of kernel launches made by graphs,
    # instantiations of one topology, eager kernel launches in steady state
    min_graph_coverage: float | Mapping[str, float] | None = None
    max_instantiations_per_topology: int | Mapping[str, int] | None = None
    max_steady_eager_launches: int | Mapping[str, int] | None = None
    # NVTX range globs (fnmatch, on each component of a region path "decode > selfcheck 3",
    # or the whole path) whose steady-state eager launches are meant: not counted against
    # max_steady_eager_launches nor min_graph_coverage's steady figure
    allow_eager_ranges: tuple[str, ...] | Mapping[str, tuple[str, ...]] = ()
    # a profile certificate's, against its baseline: a node's median, the critical
    # path's length, slower by more than this fraction (unset: max_regression)
    max_node_regression: float | Mapping[str, float] | None = None
    max_critical_path_regression: float | Mapping[str, float] | None = None
    # a span-mode profile's (graphcert profile --span): a class's replay span median slower
    # than the baseline's by more than this fraction (unset: max_regression)
    max_replay_regression: float | Mapping[str, float] | None = None
    allow_topology_change: bool = False
    # topology of one workload and class differing between GPUs warns instead of failing
    allow_cross_gpu_topology: bool = False
    allow_incomplete: bool = False  # an incomplete verdict (something could not run) warns
    max_regression: float = 0.05
    min_noise: float = 0.005
    method_change: str = "stale"  # graphcert's method changed: "stale" (exit 2) or "warn"
    require_signature: bool = False
    allow_empty_baseline: bool = False
    source: str = "defaults"

    def for_workload(self, value: T | Mapping[str, T] | None, workload: str,
                     ref: str | None = None) -> T | None:
        """A scalar as is; a table's entry for the certificate's reference `ref` (a workload
        with options, "chain[kernels=1]": a sweep's runs), else for `workload`, else its
        '*', else None."""
        if isinstance(value, Mapping):
            if ref is not None and ref in value:
                return value[ref]
            return value.get(workload, value.get("*"))
        return value

    def to_dict(self) -> JSONObject:
        return {
            "source": self.source,
            "require": {k: list(v) for k, v in self.require.items()},
            "require_kinds": list(self.require_kinds),
            "min_speedup": _plain(self.min_speedup),
            "speedup_metric": self.speedup_metric,
            "max_nodes": _plain(self.max_nodes),
            "max_plan_regret": _plain(self.max_plan_regret),
            **{k: _plain(getattr(self, k)) for k in RECORD_KEYS},
            "allow_eager_ranges": _globs(self.allow_eager_ranges),
            **{k: _plain(getattr(self, k)) for k in PROFILE_KEYS},
            "allow_topology_change": self.allow_topology_change,
            "allow_cross_gpu_topology": self.allow_cross_gpu_topology,
            "allow_incomplete": self.allow_incomplete,
            "max_regression": self.max_regression,
            "min_noise": self.min_noise,
            "method_change": self.method_change,
            "require_signature": self.require_signature,
            "allow_empty_baseline": self.allow_empty_baseline,
        }


def _plain(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


def _globs(value: tuple[str, ...] | Mapping[str, tuple[str, ...]]) -> Any:
    """allow_eager_ranges as JSON: a list, or a table of lists."""
    if isinstance(value, Mapping):
        return {k: list(v) for k, v in value.items()}
    return list(value)


RECORD_KEYS = ("min_graph_coverage", "max_instantiations_per_topology",
               "max_steady_eager_launches")  # a record certificate's keys
PROFILE_KEYS = ("max_node_regression", "max_critical_path_regression",
                "max_replay_regression")  # a profile's keys
POLICY_KEYS = ("require", "require_kinds", "min_speedup", "speedup_metric", "max_nodes",
               "max_plan_regret", *RECORD_KEYS, "allow_eager_ranges",
               "allow_topology_change", "allow_cross_gpu_topology", "allow_incomplete",
               "max_regression", "min_noise", "method_change", "require_signature",
               "allow_empty_baseline", *PROFILE_KEYS)
METHOD_CHANGE = ("stale", "warn")
# Keys whose value may be a table keyed by workload name ('*' for every workload). `require`
# is per-workload too, but a workload it names with no certificate is a FAIL (required,
# missing), never a typo to refuse.
PER_WORKLOAD_KEYS = ("min_speedup", "max_nodes", "max_plan_regret", *RECORD_KEYS,
                     "allow_eager_ranges", *PROFILE_KEYS)
# A file whose gate table is nested may be a pyproject.toml: these top-level keys belong to
# it (PEP 518, 621, 735); any other top-level key would be ignored, so it is refused.
PYPROJECT_KEYS = ("build-system", "project", "tool", "dependency-groups")
GATE_TABLE = "[tool.graphcert.gate]"


def _toml_loads(text: str) -> dict[str, Any]:
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef, unused-ignore]
        except ModuleNotFoundError as exc:
            raise PolicyError("reading a TOML policy on Python 3.10 needs the tomli package",
                              hint="pip install tomli") from exc
    data: dict[str, Any] = tomllib.loads(text)
    return data


def _gate_table(data: Mapping[str, Any], source: str) -> Any:
    """data["tool"]["graphcert"]["gate"], checking each level is a table; None if absent."""
    node: Any = data
    for depth, key in enumerate(("tool", "graphcert", "gate")):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
        if not isinstance(node, Mapping):
            where = ".".join(("tool", "graphcert", "gate")[:depth + 1])
            raise PolicyError(f"policy {source}: [{where}] must be a table, not {node!r:.40}")
    return node


def load_policy(path: Path | None = None, *, cwd: Path | None = None) -> Policy:
    """The policy from `path` (its `[tool.graphcert.gate]` or its top level), else from
    ./pyproject.toml's `[tool.graphcert.gate]`, else the defaults."""
    if path is None:
        pyproject = (cwd or Path.cwd()) / "pyproject.toml"
        if not pyproject.is_file():
            return Policy()
        data = _read_toml(pyproject, named=False)
        table = _gate_table(data, pyproject.name)
        if table is None:
            return Policy()
        _nothing_beside(data, pyproject.name)
        return parse_policy(table, f"{pyproject.name} {GATE_TABLE}")
    data = _read_toml(path)
    nested = _gate_table(data, str(path))
    if nested is not None:
        _nothing_beside(data, str(path))
        return parse_policy(nested, f"{path} {GATE_TABLE}")
    if isinstance(data.get("tool"), Mapping) and "graphcert" in data["tool"]:
        raise PolicyError(f"policy {path}: [tool.graphcert] has no {GATE_TABLE} table",
                          hint=f"put the gate's keys under {GATE_TABLE}")
    return parse_policy(data, str(path))


def _nothing_beside(data: Mapping[str, Any], source: str) -> None:
    """Refuse keys beside the nested gate table that the gate would ignore: a top-level
    key a pyproject.toml does not have, or a key under [tool.graphcert] other than gate
    (graphcert reads nothing else there)."""
    stray = [k for k in data if k not in PYPROJECT_KEYS] + \
        [f"tool.graphcert.{k}" for k in data["tool"]["graphcert"] if k != "gate"]
    if stray:
        key = stray[0]
        raise PolicyError(f"policy {source}: key {clip_repr(key)} is outside {GATE_TABLE}, "
                          f"so the gate would ignore it",
                          hint=f"move it under {GATE_TABLE}, or remove it")


def check_workload_names(policy: Policy, workloads: Collection[str]) -> None:
    """Refuse a per-workload table entry naming a workload that no certificate gated has
    (nor `require` names): such an entry applies to nothing, so it is a typo that would
    otherwise pass. An entry for a reference with options ("chain[kernels=1]", a sweep's
    run) is known when the gated certificates have that reference or its workload's name
    is known (a gate over a subset need not hold every run). One PolicyError line naming
    each, with the closest workload name."""
    known = set(workloads) | set(policy.require)
    problems = []
    for key in PER_WORKLOAD_KEYS:
        table = getattr(policy, key)
        if not isinstance(table, Mapping):
            continue
        for name in table:
            if name == "*" or name in known or name.split("[", 1)[0] in known - {name}:
                continue
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
            guess = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"{key} names workload {clip_repr(name)}, which no certificate "
                            f"in this gate run has{guess}")
    if problems:
        raise PolicyError(f"policy {policy.source}: {'; '.join(problems)}",
                          hint="name a workload the certificates carry, or '*' for every "
                               "workload")


def _read_toml(path: Path, *, named: bool = True) -> dict[str, Any]:
    """A TOML file's table; `named` False for ./pyproject.toml (found, not named: a FIFO or
    device there is refused, not read)."""
    try:
        raw = read_bounded(path, MAX_POLICY_BYTES, streams=named)
    except FileProblem as exc:
        raise PolicyError(f"policy file {exc.one_line()}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyError(f"policy file {path} is not UTF-8 text (byte {exc.start})",
                          hint="save it as UTF-8") from None
    try:
        return _toml_loads(text)
    except RecursionError:
        raise PolicyError(f"policy file {path} is nested too deeply") from None
    except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError (so is int overflow)
        raise PolicyError(f"policy file {path} is not valid TOML: "
                          f"{' '.join(str(exc).split())[:160]}") from None


def parse_policy(table: object, source: str) -> Policy:
    """Check a policy table key by key; every problem is one PolicyError line. `table` is
    whatever the TOML held (or a caller built), so anything but a table is refused here."""
    if not isinstance(table, Mapping):
        raise PolicyError(f"policy {source}: expected a table")
    unknown = sorted(set(table) - set(POLICY_KEYS))
    if unknown:
        longest = max(map(len, POLICY_KEYS))
        # a key far longer than any known one is no typo of one: the list would only make
        # the line long (and the list of known keys is long)
        raise PolicyError(f"policy {source}: unknown key {clip_repr(unknown[0])}",
                          hint=f"known keys: {', '.join(POLICY_KEYS)}"
                          if len(str(unknown[0])) <= 2 * longest else
                          f"no known key is longer than {longest} characters")

    def bad(key: str, wanted: str) -> PolicyError:
        return PolicyError(f"policy {source}: {key} must be {wanted}, not {table[key]!r:.60}")

    def kinds(key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or any(k not in KIND_NAMES for k in value):
            raise bad(key, f"a list of certificate kinds ({', '.join(KIND_NAMES)})")
        return tuple(value)

    def number(key: str, value: Any, integer: bool = False) -> Any:
        ok = isinstance(value, int) if integer else isinstance(value, (int, float))
        # NaN compares false with everything, so a NaN limit would pass any slowdown. The
        # range comes before isfinite: an int too large for a float compares exactly with
        # 1e15 but makes isfinite raise OverflowError.
        if not ok or isinstance(value, bool) or value < 0 or value > 1e15 \
                or not math.isfinite(value):
            raise bad(key, "a finite non-negative " + ("integer" if integer else "number"))
        return value

    def flag(key: str) -> bool:
        value = table.get(key, False)
        if not isinstance(value, bool):
            raise bad(key, "true or false")
        return value

    def per_workload(key: str, integer: bool = False) -> Any:
        value = table.get(key)
        if value is None:
            return None
        if isinstance(value, Mapping):
            return {str(k): number(key, v, integer) for k, v in value.items()}
        return number(key, value, integer)

    def globs(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(g, str) and 0 < len(g) <= 1000
                                                  for g in value):
            raise bad("allow_eager_ranges", 'a list of NVTX range globs like ["selfcheck*"] '
                      '(or a table of them by workload)')
        return tuple(value)

    allowed = table.get("allow_eager_ranges", [])
    require = table.get("require", {})
    if not isinstance(require, Mapping):
        raise bad("require", 'a table like {scan = ["topology", "bench"]}')
    method_change = table.get("method_change", "stale")
    if method_change not in METHOD_CHANGE:
        raise bad("method_change", '"stale" or "warn"')
    metric = table.get("speedup_metric", "end_to_end")
    if metric not in QUANTITIES:
        raise bad("speedup_metric", " or ".join(QUANTITIES))
    return Policy(
        require={str(w): kinds("require", v) for w, v in require.items()},
        require_kinds=kinds("require_kinds", table.get("require_kinds", [])),
        min_speedup=per_workload("min_speedup"),
        speedup_metric=metric,
        max_nodes=per_workload("max_nodes", integer=True),
        max_plan_regret=per_workload("max_plan_regret"),
        min_graph_coverage=per_workload("min_graph_coverage"),
        max_instantiations_per_topology=per_workload("max_instantiations_per_topology",
                                                     integer=True),
        max_steady_eager_launches=per_workload("max_steady_eager_launches", integer=True),
        allow_eager_ranges={str(k): globs(v) for k, v in allowed.items()}
        if isinstance(allowed, Mapping) else globs(allowed),
        max_node_regression=per_workload("max_node_regression"),
        max_critical_path_regression=per_workload("max_critical_path_regression"),
        max_replay_regression=per_workload("max_replay_regression"),
        allow_topology_change=flag("allow_topology_change"),
        allow_cross_gpu_topology=flag("allow_cross_gpu_topology"),
        allow_incomplete=flag("allow_incomplete"),
        max_regression=float(number("max_regression", table.get("max_regression", 0.05))),
        min_noise=float(number("min_noise", table.get("min_noise", 0.005))),
        method_change=method_change,
        require_signature=flag("require_signature"),
        allow_empty_baseline=flag("allow_empty_baseline"),
        source=source,
    )

"""The CI gate: policy, rules, report. Pure and import-light (no numpy, no CUDA)."""

from graphcert.gate.policy import Policy, PolicyError, load_policy, parse_policy
from graphcert.gate.report import (
    CertificateResult,
    GateReport,
    GateRun,
    UnusableInput,
    display_path,
    find_json_files,
    gate_run,
    load_all,
    run_gate,
)
from graphcert.gate.rules import Loaded, Rule, RuleResult, RuleStatus
from graphcert.gate.unusable import UnusableReport, judge

__all__ = [
    "CertificateResult",
    "GateReport",
    "GateRun",
    "Loaded",
    "Policy",
    "PolicyError",
    "Rule",
    "RuleResult",
    "RuleStatus",
    "UnusableInput",
    "UnusableReport",
    "display_path",
    "find_json_files",
    "gate_run",
    "judge",
    "load_all",
    "load_policy",
    "parse_policy",
    "run_gate",
]

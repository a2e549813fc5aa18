"""Tracing's overhead timed on the device clock alone (held launches): the ratio's interval,
which nodes tracing distorts, the notes, the view and the JSON, on synthetic figures (nothing
here came from a GPU); and certificates timed back to back keep their old meaning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphcert.errors import InputError
from graphcert.kinds.profile.overhead import BACK_TO_BACK, HELD, ReplayOverhead
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult
from graphcert.kinds.profile.views import overhead_text
from tests._profilecerts import SYNTHETIC_NS, synthetic_class

ROOT = Path(__file__).resolve().parents[3]


def _held(traced: list[float], untraced: list[float], records: float = 5.0) -> ReplayOverhead:
    return ReplayOverhead.held(traced, untraced, [9000.0] * len(traced),
                               [3000.0] * len(untraced), records)


def _with(over: ReplayOverhead) -> ProfiledClass:
    c = synthetic_class()
    return ProfiledClass(c.label, c.size, c.topology_hash, c.profile, over)


def test_held_figures_are_medians_with_intervals_and_host_times_apart() -> None:
    o = _held([11_000.0 + i for i in range(41)], [10_000.0 + i for i in range(41)])
    assert o.method == HELD and o.samples == 41
    assert (o.traced_ns, o.untraced_ns) == (11_020.0, 10_020.0)
    assert o.traced_interval is not None and o.untraced_interval is not None
    lo, hi = o.ratio_interval or (0.0, 0.0)
    assert lo < o.ratio < hi  # conservative: each end against the other's far end
    assert (o.host_traced_ns, o.host_untraced_ns) == (9000.0, 3000.0)
    assert o.extra_ns_per_record == pytest.approx(1000.0 / 5)


def test_touched_nodes_are_those_shorter_than_ten_times_the_cost_per_record() -> None:
    p = synthetic_class().profile
    # +200 ns a record: nodes under 2,000 ns (the synthetic 1,000, 1,000 and 500 ns ones)
    o = _held([11_000.0] * 5, [10_000.0] * 5)
    assert o.touched(p) == tuple(n.index for n in p.nodes if n.median_ns < 2000)
    assert set(o.touched(p)) == {i for i, ns in enumerate(SYNTHETIC_NS) if 0 < ns < 2000}
    assert _held([10_000.0] * 5, [10_000.0] * 5).touched(p) == ()  # nothing added


def test_a_stretch_above_the_bound_is_noted_naming_the_nodes_it_distorts() -> None:
    result = ProfileResult("scan", 5, (_with(_held([11_000.0] * 5, [10_000.0] * 5)),), 130100)
    (note,) = result.notes
    assert "1.100x" in note and "on the device clock" in note and "+200 ns" in note
    assert "3 of 5 timed nodes" in note and "node 0, 3, 5" in note


def test_traced_faster_beyond_the_noise_says_so_and_within_it_says_nothing() -> None:
    faster = _held([9_000.0 + i for i in range(41)], [10_000.0 + i for i in range(41)])
    assert faster.faster_traced()
    (note,) = ProfileResult("scan", 5, (_with(faster),), 130100).notes
    assert "read faster than untraced" in note and "profile it again" in note
    # overlapping intervals: no claim either way, and within the bound: no note
    noisy = _held([9_990.0, 10_000.0, 10_050.0, 9_950.0, 10_010.0],
                  [10_000.0, 10_020.0, 9_960.0, 10_040.0, 9_990.0])
    assert not noisy.faster_traced()
    assert ProfileResult("scan", 5, (_with(noisy),), 130100).notes == ()


def test_the_view_reads_the_device_clock_and_the_host_apart() -> None:
    text = overhead_text(_held([11_000.0] * 5, [10_000.0] * 5))
    assert text.startswith("1.100x [1.100, 1.100] on the device clock (held launches")
    assert "host launch call 3.00 µs untraced, 9.00 µs traced" in text
    legacy = overhead_text(ReplayOverhead(9_000.0, 10_000.0, 5))
    assert "events around replays enqueued back to back" in legacy  # the old explanation


def test_json_round_trip_and_old_documents() -> None:
    o = _held([11_000.0, 11_500.0, 10_800.0], [10_000.0, 10_100.0, 9_900.0])
    doc = o.to_json()
    assert doc["method"] == HELD and doc["traced_low_ns"] <= doc["traced_ns"]
    assert ReplayOverhead.from_json(doc) == o
    old = {"traced_ns": 2.0, "untraced_ns": 1.0, "samples": 3, "ratio": 2.0}
    back = ReplayOverhead.from_json(old)
    assert back.method == BACK_TO_BACK and back.ratio_interval is None
    assert back.to_json() == old  # an old certificate's block is written back as it was


@pytest.mark.parametrize(("change", "said"), [
    ({"method": "sideways"}, "method"),
    ({"traced_low_ns": 1.0}, "traced_low_ns"),
])
def test_bad_overhead_blocks_are_one_line(change: dict[str, object], said: str) -> None:
    doc = {**_with(_held([2.0] * 3, [1.0] * 3)).to_json()}
    over = dict(doc["overhead"])  # type: ignore[arg-type]
    over.pop("traced_high_ns")
    over.update(change)
    if "traced_low_ns" not in change:
        over["traced_high_ns"] = 2.0
    doc["overhead"] = over
    result = {"workload": "scan", "replays": 3, "cupti_version": 1, "classes": [doc],
              "notes": []}
    with pytest.raises(InputError, match=said) as info:
        ProfileResult.from_json(result)
    assert "\n" not in info.value.one_line()


def test_recorded_certificates_timed_back_to_back_still_load() -> None:
    paths = sorted((ROOT / "tests/fixtures/profile").rglob("*.json"))
    assert paths, "the recorded profile fixtures are missing"
    legacy = 0
    for path in paths:
        doc = json.loads(path.read_text())
        result = ProfileResult.from_json(doc["results"])
        for c, stored in zip(result.classes, doc["results"]["classes"], strict=True):
            if c.overhead is not None and "method" not in stored["overhead"]:
                assert c.overhead.method == BACK_TO_BACK
                legacy += 1
        assert result.to_json() == doc["results"]
    assert legacy, "no fixture timed back to back: this test no longer reads an old one"


def test_the_view_names_the_kernels_tracing_distorts() -> None:
    from graphcert.kinds.profile.views import distorted_text

    c = _with(_held([11_000.0] * 5, [10_000.0] * 5))  # +200 ns a record: under 2,000 ns
    text = distorted_text(c)
    assert text.startswith("3 of 5 timed nodes read over 10% slow traced: ")
    assert c.profile is not None
    names = {n.name or n.kind.value for n in c.profile.nodes if n.median_ns < 2000}
    assert all(name in text for name in names) and "×" in text
    assert distorted_text(_with(_held([10_000.0] * 5, [10_000.0] * 5))) == ""


def test_an_edited_overhead_interval_is_a_contradiction() -> None:
    """A held median moved outside its own interval (a synthetic edit) is caught by the
    evidence check, as an edited what-if interval is."""
    from graphcert.cert.evidence import contradictions
    from tests._profilecerts import profile_certificate

    result = ProfileResult("scan", 5, (_with(_held([11_000.0, 11_200.0, 10_900.0],
                                                   [10_000.0, 10_100.0, 9_900.0])),), 130100)
    cert = profile_certificate(result)
    assert contradictions(cert) == []
    cert["results"]["classes"][0]["overhead"]["untraced_low_ns"] = 10_050.0  # synthetic edit
    found = contradictions(cert)
    assert any("overhead.untraced_ns 10000 is outside its interval [10050, 10100]" in f
               for f in found), found

"""Records joined to graph nodes, on synthetic records (tests/_profiles.py; nothing here came
from a GPU): records of nodes not in the graph, missing records, dropped counts, untimed nodes,
a snapshot's nodes with their ids, and bad input as one-line InputErrors."""

from __future__ import annotations

import dataclasses

import pytest

from graphcert.errors import InputError
from graphcert.model import NodeKind, snapshot_from_raw
from graphcert.profiling import ActivityRecord, Profile, analyse, graph_of, join
from tests._modelgraphs import fork
from tests._profiles import INSTANCE, chain_graph, graph, records

K = NodeKind


def one_line_error(exc: pytest.ExceptionInfo[InputError], *words: str) -> str:
    text = str(exc.value)
    assert "\n" not in text and all(w in text for w in words), text
    return text


def test_records_join_by_the_low_32_bits_and_group_by_launch() -> None:
    g = chain_graph(3)
    joined = join(records(g, [[1, 2, 3]] * 4), g)
    assert joined.launches == (100, 101, 102, 103) and joined.timed == (0, 1, 2)
    assert joined.present.all() and joined.missing == () and joined.unmatched == ()
    assert (joined.end_ns - joined.start_ns).tolist() == [[1, 2, 3]] * 4


def test_a_record_of_a_node_not_in_the_graph_is_unmatched_and_counted() -> None:
    g = chain_graph(2)
    stray = ActivityRecord((INSTANCE << 32) | 4242, 5, 9, K.KERNEL, "k_stray", 100)
    joined = join([*records(g, [[4, 4]] * 2), stray], g)
    (u,) = joined.unmatched
    assert u.record == stray and "4242 is not in the graph" in u.reason
    profile = analyse(joined)
    assert profile.unmatched == 1 and profile.replays == 2 and profile.sum_ns == 8


def test_records_of_another_graph_instance_or_kind_do_not_join() -> None:
    g = graph([K.KERNEL, K.MEMSET], [(1, 0)])
    recs = records(g, [[5, 5]])
    other = dataclasses.replace(recs[0], graph_node_id=recs[0].node_id | (9 << 32))
    wrong_kind = dataclasses.replace(recs[1], kind=K.MEMCPY, correlation_id=101)
    backwards = dataclasses.replace(recs[0], start_ns=50, end_ns=40, correlation_id=102)
    joined = join([*recs, other, wrong_kind, backwards], g, graph_instance=INSTANCE)
    reasons = [u.reason for u in joined.unmatched]
    assert reasons[0] == f"of graph instance 9, not {INSTANCE}"
    assert "a memcpy record for node 1, a memset node" in reasons[1]
    assert "before it starts" in reasons[2]
    assert joined.launches == (100,)
    # without the instance, the other instance's record is a second record of node 0
    assert join([*recs, other], g).duplicates == 1


def test_a_replay_missing_a_record_is_reported_and_left_out() -> None:
    g = chain_graph(3)
    recs = records(g, [[10, 20, 30], [11, 21, 31], [12, 99, 32]])
    recs = [r for r in recs if not (r.correlation_id == 102 and r.node_id == g.nodes[1].node_id)]
    joined = join(recs, g, dropped=1)
    assert joined.missing == ((102, 1),)
    assert joined.complete.tolist() == [True, True, False]
    profile = analyse(joined)
    assert (profile.replays, profile.incomplete_replays, profile.dropped) == (2, 1, 1)
    assert [n.max_ns for n in profile.nodes] == [11, 21, 31]  # replay 102 is not in them


def test_untimed_nodes_are_listed_with_their_reason() -> None:
    g = graph([K.KERNEL, K.HOST, K.EVENT_RECORD, K.CONDITIONAL, K.KERNEL],
              [(0, 1), (1, 2), (2, 3), (3, 4)])
    profile = analyse(join(records(g, [[5, 0, 0, 0, 7]]), g))
    reasons = {u.index: (u.kind, u.reason) for u in profile.untimed}
    assert sorted(reasons) == [1, 2, 3]
    assert "host node runs on the CPU" in reasons[1][1]
    assert "timed by its body's records only where" in reasons[3][1]
    assert [n.index for n in profile.nodes] == [0, 4]


def test_a_snapshot_with_its_node_ids_is_the_profiled_graph() -> None:
    snap = snapshot_from_raw(fork())
    ids = [0xABCD_0000_0000 | (50 + i) for i in range(snap.node_count)]  # high bits dropped
    g = graph_of(snap, ids)
    assert [n.node_id for n in g.nodes] == [50 + i for i in range(snap.node_count)]
    assert [n.kind for n in g.nodes] == [n.kind for n in snap.nodes]
    assert g.edges == snap.edges
    assert [u.kind for u in g.untimed] == [K.GRAPH]
    with pytest.raises(InputError) as exc:
        graph_of(snap, ids[:-1])
    one_line_error(exc, "node id(s) for a 7-node graph", "one id per node")


def test_a_graph_with_no_timed_node_is_refused() -> None:
    with pytest.raises(InputError) as exc:
        graph([K.EMPTY, K.HOST], [(0, 1)])
    one_line_error(exc, "no timed node", "at least one kernel, memcpy or memset")


def test_zero_replays_is_refused() -> None:
    g = chain_graph(2)
    with pytest.raises(InputError) as exc:
        join([], g, dropped=3)
    one_line_error(exc, "no replay to analyse", "3 dropped", "replay the graph at least once")


def test_no_complete_replay_is_refused() -> None:
    g = chain_graph(2)
    recs = [r for r in records(g, [[1, 1], [2, 2]]) if r.node_id == g.nodes[0].node_id]
    with pytest.raises(InputError) as exc:
        analyse(join(recs, g))
    one_line_error(exc, "none of 2 replay(s)", "2 missing")


@pytest.mark.parametrize("dropped", [-1, 1.5, True])
def test_a_bad_dropped_count_is_refused(dropped: object) -> None:
    g = chain_graph(1)
    with pytest.raises(InputError) as exc:
        join(records(g, [[1]]), g, dropped=dropped)  # type: ignore[arg-type]
    one_line_error(exc, "is not a count")


@pytest.mark.parametrize(("kinds", "edges", "words"), [
    ([K.KERNEL, K.KERNEL], [(0, 1), (1, 0)], ("cycle",)),
    ([K.KERNEL], [(0, 3)], ("edge (0, 3)",)),
])
def test_a_bad_graph_is_refused(kinds: list[NodeKind], edges: list[tuple[int, int]],
                                words: tuple[str, ...]) -> None:
    with pytest.raises(InputError) as exc:
        graph(kinds, edges)
    one_line_error(exc, *words)


def test_a_bad_profile_document_is_refused() -> None:
    g = chain_graph(2)
    doc = analyse(join(records(g, [[1, 2]]), g)).to_json()
    del doc["span_ns"]
    with pytest.raises(InputError) as exc:
        Profile.from_json(doc)
    one_line_error(exc, "lacks 'span_ns'")
    doc = analyse(join(records(g, [[1, 2]]), g)).to_json()
    doc["nodes"][0]["kind"] = "warp"
    with pytest.raises(InputError) as exc:
        Profile.from_json(doc)
    one_line_error(exc, "bad value")


def _while_records(replays: int, rounds: int, *, body_corr: bool,
                   body_id: int = 9 << 32) -> list[ActivityRecord]:
    """Synthetic records of init -> WHILE {3 kernels}: node 0's record per replay (instance
    INSTANCE), then `rounds` rounds of the body's 3 kernels (instance 9, body node ids 0..2,
    which collide with the top level's low bits); body_id: what the body's ids add (another
    instance, or ids of their own in the top level's instance). body_corr: the body's records
    carry the launch's correlation id (else 0, so they go to a replay by time)."""
    out = []
    for r in range(replays):
        t, launch = r * 1_000_000, 100 + r
        out.append(ActivityRecord((INSTANCE << 32) | 1000, t, t + 900, K.KERNEL, "k_0", launch))
        x = t + 1000
        for _ in range(rounds):
            for b in range(3):
                out.append(ActivityRecord(body_id | b, x, x + 400, K.KERNEL, "k_body",
                                          launch if body_corr else 0))
                x += 500
    return out


@pytest.mark.parametrize("body_corr, body_id", [(True, 9 << 32), (False, 9 << 32),
                                                (True, (INSTANCE << 32) | 5000)])
def test_a_while_body_times_its_conditional_node_as_one(body_corr: bool, body_id: int) -> None:
    g = graph([K.KERNEL, K.CONDITIONAL], [(0, 1)])
    recs = _while_records(4, 6, body_corr=body_corr, body_id=body_id)
    joined = join(recs, g, graph_instance=INSTANCE)
    assert joined.unmatched == () and joined.timed == (0, 1) and joined.untimed == ()
    assert joined.body_records == {1: (18, 18, 18, 18)}
    p = analyse(joined)
    (init, body) = p.nodes
    # the body's span: 6 rounds of 3 kernels 500 ns apart, the last one 400 ns long
    assert body.kind is K.CONDITIONAL and body.median_ns == 17 * 500 + 400
    assert body.body_records == 18 and init.body_records is None
    assert p.critical_path == (0, 1) and p.gaps[0].median_ns == 100
    assert Profile.from_json(p.to_json()) == p


def test_a_conditional_stays_untimed_where_its_body_records_are_ambiguous() -> None:
    recs = _while_records(3, 2, body_corr=True)
    # two conditional nodes: the body records could be either's
    two = graph([K.KERNEL, K.CONDITIONAL, K.CONDITIONAL], [(0, 1), (0, 2)])
    joined = join(recs, two, graph_instance=INSTANCE)
    assert len(joined.unmatched) == 18 and {u.kind for u in joined.untimed} == {K.CONDITIONAL}
    # a body that ran in only some replays: untimed, its records unmatched
    one = graph([K.KERNEL, K.CONDITIONAL], [(0, 1)])
    some = [r for r in recs if not (r.graph_instance == 9 and r.correlation_id == 101)]
    joined = join(some, one, graph_instance=INSTANCE)
    assert len(joined.unmatched) == 12 and joined.body_records == {}
    assert analyse(joined).untimed[0].index == 1

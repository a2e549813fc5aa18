"""The critical path as a terminal view shows it: a serial chain's run of node indices as a
range, short runs and branches one by one (SYNTHETIC paths)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphcert.kinds.profile.views import MIN_RUN, path_text


def test_a_chain_of_1000_nodes_is_one_range() -> None:
    assert path_text(list(range(1000))) == "0..999 (1,000 nodes)"


def test_short_runs_and_jumps_stay_node_by_node() -> None:
    assert path_text([0, 1, 3, 4, 5]) == "0 -> 1 -> 3 -> 4 -> 5"
    assert path_text([0, 2, 3, 4, 5, 6, 9]) == "0 -> 2..6 (5 nodes) -> 9"
    assert path_text([]) == ""


def _expand(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(" -> ") if text else []:
        if ".." in part:
            first, rest = part.split("..")
            last = rest.split(" ")[0]
            out += range(int(first), int(last) + 1)
        else:
            out.append(int(part))
    return out


@given(st.lists(st.integers(min_value=0, max_value=60), max_size=40))
def test_the_text_names_every_node_of_the_path_in_order(path: list[int]) -> None:
    text = path_text(path)
    assert _expand(text) == path
    # a range is never shorter than MIN_RUN nodes
    for part in text.split(" -> ") if text else []:
        if ".." in part:
            first, rest = part.split("..")
            assert int(rest.split(" ")[0]) - int(first) + 1 >= MIN_RUN

"""render/layout.py and render/console.py on synthetic cells (made-up names and hashes): words
never split, tables that change layout instead of mangling cells, colour apart from layout."""

from __future__ import annotations

import io

import pytest
from rich.text import Text

from graphcert.render.console import DataConsole, colour_wanted
from graphcert.render.layout import Column, Grid
from graphcert.render.words import Outline, Pairs, Prose, units, wrap_words

HASH = "f" * 64  # synthetic: a sha256 hex digest's length
PATH = "reports/topology-synthetic_workload-TEST_GPU_80GB.json"


def draw(renderable: object, width: int, *, colour: bool = False) -> str:
    """What a terminal of `width` columns shows."""
    out = io.StringIO()
    console = DataConsole(file=out, width=width, tty=True, force_terminal=colour,
                          color_system="standard" if colour else None, highlight=False)
    console.print(renderable)
    return out.getvalue()


def test_words_are_never_split() -> None:
    lines = [t.plain for t in wrap_words(Text(f"see {PATH} for more"), 20)]
    assert lines == ["see", PATH, "for more"]  # the path alone, whole, past the width


def test_a_paragraph_keeps_its_indent() -> None:
    lines = [t.plain for t in wrap_words(Text("    a b c d e f"), 9)]
    assert lines == ["    a b c", "    d e f"]


def test_lists_break_only_between_items() -> None:
    assert units("verdict pass, min_speedup pass", ", ") == [(0, 13), (14, 30)]
    lines = [t.plain for t in wrap_words(Text("verdict pass, min_speedup pass"), 20, ", ")]
    assert lines == ["verdict pass,", "min_speedup pass"]


def test_prose_breaks_between_fields_first() -> None:
    text = Prose(f"topology {HASH[:12]}  shape {HASH[:12]}")
    assert draw(text, 30) == f"topology {HASH[:12]}\nshape {HASH[:12]}\n"


def _grid() -> Grid:
    columns = (Column("name", key=True), Column("hash"), Column("note", wrap=True),
               Column("empty"), Column("file"))
    rows = [("alpha", HASH[:12], "a short note", "", PATH),
            ("beta", HASH[:12], "another note here", "", PATH)]
    return Grid(columns, rows, rule=False)


def test_a_table_that_fits_is_one_line_a_row() -> None:
    text = draw(_grid(), 200)
    assert text.splitlines()[1].startswith("alpha") and PATH in text.splitlines()[1]
    assert len(text.splitlines()) == 3
    assert "empty" in text.splitlines()[0]  # an empty column shows while there is room


def test_a_narrow_table_moves_columns_under_its_rows() -> None:
    grid = _grid()
    shown, moved = grid.layout(70)
    assert [grid.columns[i].header for i in moved] == ["empty", "file"]  # empty ones first
    text = draw(grid, 70)
    assert f"  file: {PATH}" in text.splitlines()
    assert all(len(line) <= 70 for line in text.splitlines())
    assert "empty" not in text  # nothing to say: no label either


def test_the_narrowest_table_is_one_record_per_block() -> None:
    grid = _grid()
    shown, moved = grid.layout(10)
    assert [grid.columns[i].header for i in shown] == ["name"]
    text = draw(grid, 10)
    assert PATH in text.splitlines() and HASH[:12] in text  # whole, on a line of its own
    assert "\n\n" in text  # records set apart


def test_key_columns_stay_and_cells_are_never_cut() -> None:
    text = draw(_grid(), 30)
    assert "…" not in text and text.count(PATH) == 2


def test_colour_changes_no_layout() -> None:
    import re

    coloured = draw(Grid((Column("s", key=True), Column("f")),
                         [(Text("PASS", style="green"), PATH)]), 40, colour=True)
    assert "\x1b[" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == draw(
        Grid((Column("s", key=True), Column("f")), [("PASS", PATH)]), 40)


def test_no_line_ends_with_spaces() -> None:
    for width in (20, 60, 200):
        text = draw(_grid(), width)
        assert all(line == line.rstrip() for line in text.splitlines())


def test_pairs_put_a_wide_value_below_its_key() -> None:
    text = draw(Pairs([("digest", f"sha256:{HASH}"), ("gpu", "TEST GPU")]), 40)
    assert text.splitlines() == ["digest", f"sha256:{HASH}", "gpu     TEST GPU"]


def test_a_piped_console_prints_the_widest_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    out = io.StringIO()
    DataConsole(file=out, tty=False, color_system=None).print(_grid())
    assert len(out.getvalue().splitlines()) == 3  # a header and one line per row


def test_strings_keep_rich_markup_and_texts_are_literal() -> None:
    out = io.StringIO()
    console = DataConsole(file=out, tty=False, color_system=None)
    console.print("[bold]x[/]")
    console.print(Text("[bold]y[/]"))
    assert out.getvalue() == "x\n[bold]y[/]\n"


@pytest.mark.parametrize(("environ", "tty", "want"), [
    ({}, True, True), ({}, False, False), ({"FORCE_COLOR": "1"}, False, True),
    ({"FORCE_COLOR": ""}, True, False), ({"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, True,
                                         False)])
def test_colour_is_asked_for_apart_from_layout(environ: dict[str, str], tty: bool,
                                               want: bool) -> None:
    assert colour_wanted(environ, tty) is want


def test_an_outline_never_crops_a_label() -> None:
    tree = Outline("graph")
    node = tree.add(f"0 kernel: {PATH} after -")
    node.add("0.0 kernel: k_child")
    tree.add("1 kernel: k_last")
    lines = draw(tree, 30).splitlines()
    assert lines == ["graph", "├── 0 kernel:", f"│   {PATH}", "│   after -",
                     "│   └── 0.0 kernel: k_child", "└── 1 kernel: k_last"]

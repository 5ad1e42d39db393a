"""SVG pictures: well-formed XML, one element per point named right, balls coloured right,
marks where asked; ``rotary show --svg/--png``."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import pytest

from solver.game.board import hex_board
from solver.game.config import make_config
from solver.game.position import Position
from solver.game.start import standard_start
from solver.view import svg
from solver.view.picture import playable_points, position_svg
from tests.helpers import run

NS = "{http://www.w3.org/2000/svg}"
HEX3 = ".../..o./.o.../x.x.../.o.xx/..o. x"
SETUP = ".../..../ox.../ox..x./..x../o.o. o pick c3 d4"


def points_of(text: str) -> dict[str, ET.Element]:
    root = ET.fromstring(text)
    assert root.tag == NS + "svg"
    groups = [g for g in root.iter() if "data-point" in g.attrib]
    names = [g.attrib["data-point"] for g in groups]
    assert len(names) == len(set(names))
    return dict(zip(names, groups))


def balls(group: ET.Element) -> list[ET.Element]:
    return [c for c in group.iter(NS + "circle") if "ball" in c.attrib.get("class", "").split()]


@pytest.mark.parametrize("text", [standard_start().text(), HEX3, SETUP, "x.x./...../ooooo./......./......../......./....../..... x"])
def test_one_element_per_point_and_balls_coloured_right(text):
    pos = Position(text)
    groups = points_of(svg.board(pos))
    assert sorted(groups) == sorted(pos.board.names)
    for p, name in enumerate(pos.board.names):
        found = balls(groups[name])
        side = "x" if pos.x >> p & 1 else "o" if pos.o >> p & 1 else None
        if side is None:
            assert found == [] and "empty" in groups[name].attrib["class"].split()
        else:
            (ball,) = found
            assert ball.attrib["class"] == f"ball {side}" and ball.attrib["fill"] == svg.COLOURS[side]
            assert groups[name].attrib["data-ball"] == side


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_every_board_size_draws(n):
    board = hex_board(n)
    pos = Position.make(board, 0, 0, 0)
    root = ET.fromstring(svg.board(pos, size=300))
    assert root.attrib["width"] == "300" and root.attrib["data-board"] == f"hex{n}"
    assert len(points_of(svg.board(pos))) == 3 * n * n
    # the centre triangle joins the three centre points
    (tri,) = [e for e in root.iter(NS + "polygon") if e.attrib.get("class") == "centre"]
    assert len(tri.attrib["points"].split()) == 3


def test_marks_legal_values_traps_last_move():
    cfg = make_config(4, capture=True)
    pos = standard_start()
    text = svg.board(
        pos, last_move="d3+2", legal=["d3", "f3", "e4"], values={"d3": ("win", 5), "f3": "draw", "e4": {"value": "loss", "plies": 4}},
        traps=(cfg.traps_x, cfg.traps_o),
    )
    groups = points_of(text)
    legal = sorted(n for n, g in groups.items() if "legal" in g.attrib["class"].split())
    assert legal == ["d3", "e4", "f3"]
    assert {n: g.attrib["data-value"] for n, g in groups.items() if "data-value" in g.attrib} == {
        "d3": "win", "e4": "loss", "f3": "draw"
    }
    assert "win in 5" in groups["d3"].find(NS + "title").text
    traps = {n: c.attrib["class"] for n, g in groups.items() for c in g.iter(NS + "circle") if "trap" in c.attrib.get("class", "")}
    assert traps == {**{n: "trap x" for n in ("a2", "c1", "f2", "g3")}, **{n: "trap o" for n in ("a3", "a6", "b8", "c8")}}
    root = ET.fromstring(text)
    (last,) = [g for g in root.iter(NS + "g") if g.attrib.get("class") == "last-move"]
    assert last.attrib["data-last-move"] == "d3+2" and "+2" in "".join(last.itertext())


def test_last_move_of_the_setup_phases():
    pos = Position(SETUP)
    groups = points_of(svg.board(pos, last_move="offer c3 d4"))
    ringed = sorted(n for n, g in groups.items() if any(c.attrib.get("class") == "last" for c in g.iter(NS + "circle")))
    assert ringed == ["c3", "d4"]
    offered = sorted(n for n, g in groups.items() if any(c.attrib.get("class") == "offered" for c in g.iter(NS + "circle")))
    assert offered == ["c3", "d4"]


def test_playable_points_per_phase():
    cfg = make_config(3, 4, setup="offer")
    names = lambda pos: [cfg.board.names[p] for p in playable_points(cfg, pos)]  # noqa: E731
    assert names(Position(SETUP)) == ["c3", "d4"]
    empty = Position(".../..../...../....../...../.... x place")
    assert len(names(empty)) == 27 - 3
    assert names(Position(".../..../ox.../ox..x./..x../o.o. x offer")) == ["b2", "d2", "c3", "d3", "c4", "d4", "b5"]
    text = position_svg(make_config(3), Position(HEX3))
    assert sorted(n for n, g in points_of(text).items() if "legal" in g.attrib["class"]) == ["d3", "e3"]


def test_show_writes_svg_and_png(capsys, tmp_path):
    pytest.importorskip("resvg_py")
    rc, out, err = run(capsys, "show", HEX3, "--svg", tmp_path / "b.svg", "--png", tmp_path / "b.png", "--size", "200")
    assert rc == 0 and err == ""
    assert f"wrote {tmp_path / 'b.svg'}" in out and f"wrote {tmp_path / 'b.png'}" in out
    assert len(points_of((tmp_path / "b.svg").read_text())) == 27
    data = (tmp_path / "b.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(data[16:20], "big") == 200


def test_png_without_the_extra_says_how_to_install_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "resvg_py", None)  # import fails as if not installed
    rc, out, err = run(capsys, "show", HEX3, "--svg", tmp_path / "b.svg", "--png", tmp_path / "b.png")
    assert rc == 2 and err == "rotary: error: PNG pictures need resvg-py: pip install 'rotary[png]'\n"
    assert not (tmp_path / "b.png").exists() and not (tmp_path / "b.svg").exists()
    rc, out, err = run(capsys, "show", HEX3, "--svg", tmp_path / "b.svg", "--size", "3")
    assert rc == 2 and "--size" in err

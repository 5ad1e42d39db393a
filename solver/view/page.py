"""The HTML page of a position: the board, its value, the moves best first (plain links that a
little inline JavaScript turns into clicks without reloads; no CDN, no framework).

The page works without JavaScript (every move is a link to the next position's URL, as on
syzygy-tables.info); with it, clicking a move, or a point and then a rotation, plays it,
``history.pushState`` keeps the URL, and the buttons play the best move, answer every move
with the perfect reply, or start a proof. Where nothing else answers a position still in
play, the page asks the engine (``/api/analyse``) and shows its score, line and a score
for every move once it has thought.

Marks from the answer's extra fields: at a node of a loaded proof tree (``tree``) the
winner's move is tagged "proof tree: wins in N" in the list and drawn on the board, and at
the loser's nodes every reply is listed with the winner's answer and the distance left;
moves into positions of the opening book (``book``) are tagged "book".
"""

from __future__ import annotations

from html import escape
from urllib.parse import urlencode

from solver.game.config import Config
from solver.game.move import OFFER_MOVE
from solver.game.notation import parse_move_text
from solver.game.position import Position
from solver.view.picture import position_svg

SIDE_NAMES = ("light (x)", "dark (o)")
PHASE_WORDS = {
    "place": "places a ball",
    "offer": "offers two legal points",
    "pick": "picks one of the offered points",
    "at": "rotates at the picked point",
}
DECIDED = ("win", "draw", "loss")


def page_url(text: str, move: str | None = None) -> str:
    query = {"p": text}
    if move:
        query["m"] = move
    return "/?" + urlencode(query)


def move_points(cfg: Config, move: str) -> list[str]:
    """The point names a click selects to play ``move`` (two for an offer)."""
    m = parse_move_text(cfg.board, move)
    names = [cfg.board.names[m.point]]
    if m.kind == OFFER_MOVE:
        names.append(cfg.board.names[m.point2])
    return names


def value_text(value: str, plies: int | None, exact: bool = True) -> str:
    if plies is None or value not in ("win", "loss"):
        return value
    return f"{value} in {plies}" if exact else f"{value} in ≤{plies}"


def fades(moves: list[dict]) -> list[float]:
    """Opacity per move, GamesmanUni-style: within each of win / loss, the quickest end is
    vivid and the longest faded; draws and unknown values stay as they are."""
    out = []
    spans: dict[str, tuple[int, int]] = {}
    for m in moves:
        if m["value"] in ("win", "loss") and m["plies"] is not None:
            lo, hi = spans.get(m["value"], (m["plies"], m["plies"]))
            spans[m["value"]] = (min(lo, m["plies"]), max(hi, m["plies"]))
    for m in moves:
        span = spans.get(m["value"])
        if span is None or m["plies"] is None or span[0] == span[1]:
            out.append(1.0)
        else:
            out.append(round(1.0 - 0.6 * (m["plies"] - span[0]) / (span[1] - span[0]), 2))
    return out


def point_values(cfg: Config, answer: dict) -> dict[str, tuple[str, int | None]]:
    """The best value reachable from each point (moves come best first), for the board's marks."""
    marks: dict[str, tuple[str, int | None]] = {}
    for m in answer["moves"]:
        if m["value"] not in DECIDED:
            continue
        points = move_points(cfg, m["move"])
        if len(points) == 1:
            marks.setdefault(points[0], (m["value"], m["plies"]))
    return marks


def _status_line(cfg: Config, pos: Position, answer: dict) -> str:
    side = SIDE_NAMES[pos.turn]
    if not answer["moves"]:
        from solver.play.game import why_over

        return f'<p class="over">{escape(why_over(cfg, pos))}</p>'
    what = PHASE_WORDS.get(pos.phase, "rotates")
    offered = ""
    if pos.phase in ("pick", "at"):
        offered = " (" + " ".join(cfg.board.names[p] for p in pos.points) + ")"
    return f'<p class="turn">{escape(side)} to move: {what}{escape(offered)}</p>'


def score_text(score: dict) -> str:
    """An engine score in words: ``+0.38`` (an estimate, in logits) or ``win in 11``."""
    if score["kind"] == "cp":
        return f"{score['value'] / 100:+.2f}"
    return f"{score['kind']} in {score['value']}"


def _engine_line(pos: Position, answer: dict) -> str:
    side = SIDE_NAMES[pos.turn]
    score = score_text(answer["score"])
    proven = " (proven)" if answer["value"] in DECIDED else " (estimate)"
    line = " ".join(answer.get("line") or [])
    return (f'<p class="value engine {escape(answer["value"])}" data-value="{escape(answer["value"])}">'
            f'<b class="score">{escape(score)}</b>{escape(proven)} for {escape(side)} '
            f'<span class="source">(engine, depth {answer["depth"]}, {answer["nodes"]} nodes)</span></p>'
            f'<p class="line">line: <code id="line">{escape(line)}</code></p>')


def _value_line(pos: Position, answer: dict) -> str:
    value, plies, source = answer["value"], answer["plies"], answer["source"]
    side = SIDE_NAMES[pos.turn]
    if source == "engine":
        return _engine_line(pos, answer)
    if source == "rules" and value == "unknown":
        return ('<p class="value unknown" data-value="unknown">no database answers for this position '
                "(under these rules and material): moves are shown without values</p>")
    words = value_text(value, plies, answer["exact"])
    where = f'{source}: {answer["from"]}' if answer.get("from") else source
    if "score" in answer and value not in DECIDED:
        words += f", estimate {score_text(answer['score'])}"
    return (f'<p class="value {escape(value)}" data-value="{escape(value)}"><b>{escape(words)}</b> for {escape(side)}'
            f' <span class="source">({escape(where)})</span></p>')


def _tags(m: dict, tree: dict | None) -> tuple[list[str], str, str]:
    """A move's tags (the proof tree's move or answer, a book position), classes and attributes."""
    tags, classes, attrs = [], "", ""
    if tree and tree.get("position") == m["position"]:  # the tree's move, or one to the same position
        tags.append(f'<span class="tag tree" title="the move of the proof tree {escape(tree["file"])}">'
                    f'proof tree: wins in {tree["plies"]}</span>')
        classes += " tree"
        attrs += f' data-tree="{tree["plies"]}"'
    reply = next((r for r in (tree or {}).get("replies", []) if m["move"] in r["moves"]), None)
    if reply is not None:
        what = f'→ {reply["answer"]}' if reply["answer"] else "→ over"
        tags.append(f'<span class="tag tree" title="answered in the proof tree: {escape(tree["winner"])} wins in '
                    f'{reply["plies"]}">{escape(what)}</span>')
        classes += " answered"
        attrs += f' data-tree-answer="{escape(reply["answer"] or "")}"'
    if m.get("source") in ("proof", "book") and m["value"] in DECIDED:  # a value the shipped store proves
        tags.append(f'<span class="tag known" title="proven: {escape(m.get("from", ""))}">{escape(m["source"])}</span>')
        classes += " known"
        attrs += f' data-source="{escape(m["source"])}"'
    elif "score" in m and m.get("source"):
        attrs += f' data-source="{escape(m["source"])}"'
        tags.append(f'<span class="tag estimate" title="an estimate ({escape(m["source"])}), not a proof">estimate</span>')
    if m.get("book"):
        score = f', score {score_text(m["score"])}' if "score" in m else ""
        words = value_text(m["value"], m["plies"], m["exact"])
        tags.append(f'<span class="tag book" title="a position of the opening book: {escape(words + score)}">book</span>')
        classes += " book"
        attrs += ' data-book="1"'
    return tags, classes, attrs


def _moves_table(cfg: Config, answer: dict) -> str:
    rows = []
    for m, fade in zip(answer["moves"], fades(answer["moves"])):
        value = m["value"]
        words = value_text(value, m["plies"], m["exact"])
        if "score" in m and value not in DECIDED:
            words = score_text(m["score"])  # the engine's estimate
        cls = value if value in DECIDED else "unknown"
        tags, marked, attrs = _tags(m, answer.get("tree"))
        rows.append(
            f'<li><a class="move {cls}{marked}" href="{escape(page_url(m["position"], m["move"]))}" '
            f'data-move="{escape(m["move"])}" data-points="{escape(" ".join(move_points(cfg, m["move"])))}" '
            f'data-value="{escape(value)}" data-plies="{"" if m["plies"] is None else m["plies"]}"{attrs}>'
            f'<span class="name">{escape(m["move"])}</span><span class="tags">{"".join(tags)}</span>'
            f'<span class="badge {cls}" style="opacity:{fade}">{escape(words)}</span></a></li>'
        )
    if not rows:
        return '<ol id="moves" class="moves"></ol>'
    return f'<ol id="moves" class="moves">{"".join(rows)}</ol>'


def _tree_section(tree: dict | None) -> str:
    """The proof tree's word on the position: the winner's move, or every reply of the
    loser with the winner's answer and the distance left, or the finished game."""
    if not tree:
        return ""
    winner = SIDE_NAMES["xo".index(tree["winner"])]
    head = (f'<section id="tree" class="tree" data-tree-file="{escape(tree["file"])}" data-tree-node="{tree["node"]}" '
            f'data-tree-plies="{tree["plies"]}"><p class="tree-head"><b>proof tree</b> '
            f'<span class="source">({escape(tree["file"])})</span>: ')
    if "move" in tree:
        link = (f'<a class="tree-move" href="{escape(page_url(tree["position"], tree["move"]))}" '
                f'data-play="{escape(tree["move"])}">{escape(tree["move"])}</a>')
        return f"{head}{escape(winner)} wins in {tree['plies']} with {link}</p></section>"
    if "replies" not in tree:
        return f"{head}the game is over, won by {escape(winner)}</p></section>"
    loser = SIDE_NAMES[1 - "xo".index(tree["winner"])]
    rows = []
    for r in tree["replies"]:
        moves = " ".join(f'<a href="{escape(page_url(r["position"], mv))}" data-play="{escape(mv)}">{escape(mv)}</a>'
                         for mv in r["moves"])
        if r["answer"]:
            answer = (f'<a class="answer" href="{escape(page_url(r["answer_position"], r["answer"]))}" '
                      f'data-play="{escape(r["answer"])}">{escape(r["answer"])}</a>: wins in {r["plies"]}')
        else:
            answer = f"the game is over, won by {escape(winner)}"
        rows.append(f'<li data-reply="{escape(" ".join(r["moves"]))}" data-answer="{escape(r["answer"] or "")}" '
                    f'data-plies="{r["plies"]}">{moves} → {answer}</li>')
    return (f"{head}{escape(winner)} wins in {tree['plies']}: every reply of {escape(loser)} is answered</p>"
            f'<ol class="replies">{"".join(rows)}</ol></section>')


def render(cfg: Config, pos: Position, answer: dict, *, last_move: str | None = None, rules: str = "",
           can_prove: bool = False, can_analyse: bool = False, size: int = 520) -> str:
    """The whole page of ``pos`` (``answer`` in the one answer schema)."""
    text = pos.text()
    marks = point_values(cfg, answer)
    hint = (answer.get("tree") or {}).get("move")
    try:
        picture = position_svg(cfg, pos, last_move=last_move, values=marks, size=size, hint=hint)
    except ValueError:  # a last move (or a tree's move) that does not parse is only not drawn
        picture = position_svg(cfg, pos, values=marks, size=size)
    decided = answer["moves"] and (answer["moves"][0]["value"] in DECIDED or answer["source"] == "engine")
    buttons = [
        f'<button type="button" data-action="best"{"" if decided else " disabled"}>best move</button>',
        f'<button type="button" data-action="reply" aria-pressed="false"{"" if decided else " disabled"} '
        'title="answer each move you play with the perfect reply">perfect reply</button>',
    ]
    if can_prove:
        buttons.append('<button type="button" data-action="prove" title="df-pn with a small budget, in the background">'
                       "prove</button>")
    analyse = ' data-analyse="1"' if can_analyse else ""
    body = f"""<main id="view" data-position="{escape(text)}" data-source="{escape(answer["source"])}" data-value="{escape(answer["value"])}"{analyse}>
<div class="board">{picture}</div>
<section class="info">
<p class="position"><code>{escape(text)}</code></p>
{_status_line(cfg, pos, answer)}
{_value_line(pos, answer)}
{_tree_section(answer.get("tree"))}
<p class="buttons">{"".join(buttons)} <span id="note" class="note"></span></p>
<div id="chooser" class="chooser"></div>
{_moves_table(cfg, answer)}
<p class="help">Click a move, or a marked point and then a rotation. Values are for the side to move;
plies count both sides' moves to the end with best play. <a href="/api/position?{escape(urlencode({"p": text}))}">JSON</a>
· <a href="/svg?{escape(urlencode({"p": text}))}">SVG</a></p>
</section>
</main>"""
    return _document(f"ROTARY · {text}", body, rules, text)


def error_page(message: str, text: str, rules: str = "") -> str:
    body = f'<main id="view" class="error"><p class="error">{escape(message)}</p></main>'
    return _document("ROTARY · error", body, rules, text)


def _document(title: str, body: str, rules: str, text: str) -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>{CSS}</style></head>
<body>
<header><a class="home" href="/">ROTARY</a> <span class="rules">{escape(rules)}</span>
<form method="get" action="/"><input name="p" value="{escape(text)}" size="56" aria-label="position"
spellcheck="false"><button>show</button></form></header>
{body}
<script>{JS}</script>
</body></html>
"""


CSS = """
body{font:15px/1.4 system-ui,sans-serif;margin:0;background:#f4f1ea;color:#222}
header{display:flex;gap:1em;align-items:center;flex-wrap:wrap;padding:.5em 1em;background:#3b3326;color:#eee}
header .home{color:#ffd27a;font-weight:bold;text-decoration:none;letter-spacing:.1em}
header form{margin-left:auto}header input{font:13px monospace}
main{display:flex;flex-wrap:wrap;gap:1.5em;padding:1em}
.board svg{max-width:100%;height:auto}
.info{min-width:18em;max-width:34em}
.position code{font-size:13px;word-break:break-all}
.value.win b{color:#1e9e3e}.value.loss b{color:#9c1b1b}.value.draw b{color:#b08400}
.source{color:#777;font-size:90%}.line code{font-size:13px}.note{color:#555;font-size:90%}
.moves{list-style:none;padding:0;margin:.5em 0;columns:2;column-gap:1em}
.moves li{break-inside:avoid}
.moves a{display:flex;justify-content:space-between;gap:.5em;padding:.15em .4em;margin:1px 0;border-radius:4px;
text-decoration:none;color:#222;font-family:monospace}
.moves a:hover{background:#e4ddcc}
.badge{border-radius:3px;padding:0 .4em;color:#fff;font-family:system-ui,sans-serif;font-size:90%}
.badge.win{background:#1e9e3e}.badge.draw{background:#d9a300}.badge.loss{background:#9c1b1b}
.badge.unknown{background:#999}
.chooser button{margin:.15em;font-family:monospace}
.chooser button.win{border-color:#1e9e3e}.chooser button.loss{border-color:#9c1b1b}.chooser button.draw{border-color:#d9a300}
button[aria-pressed=true]{background:#1f6fd1;color:#fff}
[data-point].legal{cursor:pointer}
[data-point].selected .socket{fill:#1f6fd1}
[data-point].selected .legal-mark{fill-opacity:.9}
.error{color:#9c1b1b;font-weight:bold}
.moves a .tags{margin-right:auto}
.tag{border-radius:3px;padding:0 .3em;margin-left:.3em;font-family:system-ui,sans-serif;font-size:75%;color:#fff;
white-space:nowrap}
.moves a .badge{white-space:nowrap}
.tag.tree{background:#e07b00}.tag.book{background:#6b4fa0}.tag.known{background:#2a7a3a}.tag.estimate{background:#888}
.moves a.tree{outline:2px solid #e07b00}
.tree .replies{margin:.3em 0;padding-left:1.5em;font-family:monospace}
.tree a{color:#a35a00}
"""

JS = r"""
(function () {
  "use strict";
  var selected = [];
  function view() { return document.getElementById("view"); }
  function moveLinks() { return Array.prototype.slice.call(document.querySelectorAll("#moves a[data-move]")); }
  function pointsOf(a) { return a.getAttribute("data-points").split(" "); }
  function note(text) { var n = document.getElementById("note"); if (n) n.textContent = text; }
  function replyOn() { return window.localStorage.getItem("rotary-reply") === "on"; }

  function load(url, push) {
    return fetch(url, {headers: {"Accept": "text/html"}}).then(function (r) { return r.text(); }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var fresh = doc.getElementById("view");
      if (!fresh) { window.location.href = url; return; }
      view().replaceWith(fresh);
      document.title = doc.title;
      var input = document.querySelector("header input[name=p]");
      if (input && fresh.getAttribute("data-position")) input.value = fresh.getAttribute("data-position");
      if (push) history.pushState({}, "", url);
      selected = [];
      refresh();
      analyse();
    });
  }

  function play(a, auto) {
    return load(a.getAttribute("href"), true).then(function () {
      if (!auto && replyOn()) {
        var first = moveLinks()[0];
        if (first && ["win", "draw", "loss"].indexOf(first.getAttribute("data-value")) >= 0) {
          window.setTimeout(function () { play(first, true); }, 250);
        }
      }
    });
  }

  function refresh() {
    var b = document.querySelector("button[data-action=reply]");
    if (b) b.setAttribute("aria-pressed", replyOn() ? "true" : "false");
    var groups = document.querySelectorAll("[data-point]");
    for (var i = 0; i < groups.length; i++) {
      groups[i].classList.toggle("selected", selected.indexOf(groups[i].getAttribute("data-point")) >= 0);
    }
  }

  function chooser(links) {
    var box = document.getElementById("chooser");
    if (!box) return;
    box.textContent = "";
    links.forEach(function (a) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = a.getAttribute("data-value");
      b.setAttribute("data-choose", a.getAttribute("data-move"));
      var badge = a.querySelector(".badge");
      b.textContent = a.getAttribute("data-move") + (badge ? "  " + badge.textContent : "");
      box.appendChild(b);
    });
  }

  function pointClick(name) {
    var links = moveLinks();
    var sel = selected.indexOf(name) >= 0 ? selected.filter(function (s) { return s !== name; }) : selected.concat([name]);
    function having(s) { return links.filter(function (a) { var p = pointsOf(a); return s.every(function (x) { return p.indexOf(x) >= 0; }); }); }
    var cands = having(sel);
    if (!cands.length) { sel = [name]; cands = having(sel); }
    if (!cands.length) { sel = []; }
    selected = sel;
    refresh();
    chooser([]);
    if (!sel.length) return;
    var whole = cands.filter(function (a) { return pointsOf(a).length === sel.length; });
    if (whole.length && whole.length === cands.length) {
      if (whole.length === 1) { play(whole[0]); return; }
      chooser(whole);
    }
  }

  function poll(text, started) {
    fetch("/api/prove?p=" + encodeURIComponent(text)).then(function (r) { return r.json(); }).then(function (job) {
      if (view().getAttribute("data-position") !== text) return;
      if (job.state === "running") {
        note("proving… " + Math.round((Date.now() - started) / 1000) + " s");
        window.setTimeout(function () { poll(text, started); }, 600);
      } else if (job.state === "done") {
        load(window.location.pathname + window.location.search, false).then(function () { note("proved: " + job.answer.value); });
      } else {
        note(job.error || "the proof failed");
      }
    });
  }

  function analyse() {
    var v = view();
    if (!v || v.getAttribute("data-analyse") !== "1") return;
    var text = v.getAttribute("data-position"), started = Date.now();
    note("the engine is thinking…");
    function ask() {
      fetch("/api/analyse?p=" + encodeURIComponent(text)).then(function (r) { return r.json(); }).then(function (job) {
        if (view().getAttribute("data-position") !== text) return;
        if (job.state === "running") { window.setTimeout(ask, 300); return; }
        if (job.state === "done") {
          load(window.location.pathname + window.location.search, false).then(function () {
            note("engine: " + Math.round((Date.now() - started) / 100) / 10 + " s");
          });
        } else { note(job.error || "the analysis failed"); }
      });
    }
    fetch("/api/analyse?p=" + encodeURIComponent(text), {method: "POST"}).then(ask);
  }

  var actions = {
    best: function () { var first = moveLinks()[0]; if (first) play(first, false); },
    reply: function () {
      window.localStorage.setItem("rotary-reply", replyOn() ? "off" : "on");
      refresh();
    },
    prove: function (b) {
      var text = view().getAttribute("data-position");
      b.disabled = true;
      fetch("/api/prove?p=" + encodeURIComponent(text), {method: "POST"}).then(function () { poll(text, Date.now()); });
    }
  };

  document.addEventListener("click", function (e) {
    var t = e.target;
    var a = t.closest("#moves a[data-move], #tree a[data-play]");
    if (a) { e.preventDefault(); play(a, false); return; }
    var c = t.closest("[data-choose]");
    if (c) {
      var link = moveLinks().filter(function (m) { return m.getAttribute("data-move") === c.getAttribute("data-choose"); })[0];
      if (link) play(link, false);
      return;
    }
    var b = t.closest("button[data-action]");
    if (b) { e.preventDefault(); actions[b.getAttribute("data-action")](b); return; }
    var p = t.closest("[data-point]");
    if (p) pointClick(p.getAttribute("data-point"));
  });
  window.addEventListener("popstate", function () { load(window.location.pathname + window.location.search, false); });
  refresh();
  analyse();
})();
"""

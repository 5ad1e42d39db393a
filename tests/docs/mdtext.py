"""What the documentation tests read out of README.md and docs/*.md: code blocks, inline
code, links, repository paths and ``rotary`` command lines — plain functions over text,
so that each test can also be fed a made-up page."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# the repository's own top folders: a path in the docs that starts with one names a file
# of the repository (a user's folders, rotary-db/ or /tmp/..., never start so)
REPO_DIRS = ("solver", "scripts", "tests", "data", "docs", ".ci")
_PATH = re.compile(r"(?<![\w./$~-])(?:" + "|".join(re.escape(d) for d in REPO_DIRS) + r")/[\w./*?{},\[\]+-]*")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def doc_files() -> list[Path]:
    """README.md and every docs/*.md."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@dataclass
class Block:
    """A fenced code block: its info string (``python``, ``json``, …), text, first line."""

    info: str
    text: str
    line: int


def split_blocks(text: str) -> tuple[list[Block], str]:
    """The fenced code blocks of a page, and the page with them blanked out (the same
    number of lines, so line numbers of the rest still hold)."""
    blocks: list[Block] = []
    prose: list[str] = []
    fence, info, body, start = None, "", [], 0
    for no, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        m = _FENCE.match(stripped)
        if fence is None:
            if m:
                fence, info, body, start = m.group(1), m.group(2).strip(), [], no
                prose.append("")
            else:
                prose.append(line)
        else:
            prose.append("")
            if stripped.startswith(fence) and not stripped.strip(fence[0]).strip():
                blocks.append(Block(info.split()[0].lower() if info else "", "\n".join(body), start))
                fence = None
            else:
                body.append(line)
    if fence is not None:  # an unclosed fence runs to the end, as in CommonMark
        blocks.append(Block(info.split()[0].lower() if info else "", "\n".join(body), start))
    return blocks, "\n".join(prose)


def inline_code(prose: str) -> list[tuple[str, int]]:
    """Inline code spans (``code``) of text outside code blocks, with their line; a span
    may run over a line break (it is joined with a space, as rendered)."""
    out = []
    for m in re.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", prose, re.S):
        code = " ".join(m.group(2).split())
        if code:
            out.append((code, prose.count("\n", 0, m.start()) + 1))
    return out


def without_code(prose: str) -> str:
    """The text outside code blocks with inline code spans blanked (their lines kept)."""
    return re.sub(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", lambda m: "\n" * m.group(0).count("\n"), prose, flags=re.S)


def links(prose: str) -> list[tuple[str, int]]:
    """Link and image targets outside code: ``[text](target)``, ``[id]: target``,
    ``<img src=…>`` / ``<a href=…>``, with their line."""
    text = without_code(prose)
    out = []
    patterns = (
        r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)",
        r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$",
        r"<(?:img|a|source)\b[^>]*?\b(?:src|href)\s*=\s*[\"']([^\"']+)[\"']",
    )
    for pat in patterns:
        for m in re.finditer(pat, text, re.M):
            out.append((m.group(1), text.count("\n", 0, m.start()) + 1))
    return sorted(out, key=lambda t: t[1])


def repo_paths(text: str) -> list[tuple[str, int]]:
    """Repository paths a page names in inline code, in code blocks and in links (e.g.
    ``solver/db/store.py``, ``scripts/bench_solve.py``, ``data/checksums/*.sha256``), with
    their line, each cut to its path: ``file.py::test``, ``file.py:123``, ``#anchor`` and
    trailing punctuation dropped."""
    blocks, prose = split_blocks(text)
    sources = [*inline_code(prose)]
    for b in blocks:
        sources += [(line, b.line + i + 1) for i, line in enumerate(b.text.splitlines())]
    sources += [(target, no) for target, no in links(prose) if not re.match(r"^[a-z][a-z+.-]*:", target)]
    out = []
    for source, no in sources:
        for m in _PATH.finditer(source):
            path = re.split(r"::|:(?!/)|#", m.group(0))[0].rstrip(".,;)")
            if path.count("/") >= 1 and path.rstrip("/") not in REPO_DIRS:
                out.append((path, no))
    return out


def expand_braces(path: str) -> list[str]:
    """``solver/{game,db}/x.py`` -> both paths (one level of braces)."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [p for alt in m.group(1).split(",") for p in expand_braces(path[: m.start()] + alt + path[m.end():])]


def ignored_roots() -> list[str]:
    """Folders .gitignore anchors at the root (``/data/db/``): a user's, not the repository's."""
    try:
        lines = (ROOT / ".gitignore").read_text().split()
    except OSError:
        return []
    return [line.strip("/") + "/" for line in lines if line.startswith("/") and "*" not in line]


def path_exists(path: str) -> bool:
    """Does the repository have ``path`` (a glob matching something counts)?"""
    for p in expand_braces(path):
        if any(ch in p for ch in "*?["):
            if not any(ROOT.glob(p.rstrip("/"))):
                return False
        elif not (ROOT / p).exists():
            return False
    return True


def github_anchors(text: str) -> set[str]:
    """The anchors GitHub makes of a page's headings (lower case, punctuation dropped,
    spaces as hyphens, ``-1``, ``-2`` for repeats), and explicit ``<a name/id=…>`` ones."""
    _, prose = split_blocks(text)
    seen: dict[str, int] = {}
    anchors = set()
    for line in prose.splitlines():
        m = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))  # a link: its text
        title = re.sub(r"<[^>]+>", "", title).replace("`", "").replace("*", "")
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    anchors.update(re.findall(r"<a\s+(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", text))
    return anchors


# ---------------------------------------------------------------------------- rotary command lines


@dataclass
class Command:
    """A ``rotary …`` command line shown in a page: as written, and where."""

    text: str
    line: int
    template: bool  # from inline code: may use [optional] parts, a|b choices, PLACEHOLDERS


def _logical_lines(text: str) -> list[tuple[str, int]]:
    """Lines of a code block with ``\\`` continuations joined."""
    out, pending, start = [], "", 0
    for i, line in enumerate(text.splitlines()):
        if not pending:
            start = i
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append((pending + line, start))
        pending = ""
    if pending:
        out.append((pending, start))
    return out


def commands(text: str) -> list[Command]:
    """Every ``rotary`` command line of a page: in code blocks (shell blocks or blocks
    without an info string, not python/json/text…; where a block marks commands with a
    ``$`` prompt, only those lines), each command of a pipe or ``&&`` chain; and inline
    code that starts with ``rotary ``."""
    blocks, prose = split_blocks(text)
    out = []
    for b in blocks:
        if b.info and b.info not in ("sh", "bash", "shell", "console", "shell-session", "sh-session"):
            continue  # python, json, text (a synopsis, an output): not command lines
        lines = _logical_lines(b.text)
        prompted = any(line.lstrip().startswith("$ ") for line, _ in lines)
        for line, i in lines:
            s = line.strip()
            if prompted:
                if not s.startswith("$ "):
                    continue
                s = s[2:]
            if re.search(r"(^|[\s;|&(])rotary\s", s) or s == "rotary":
                synopsis = bool(re.search(r"\[\s*-", s))  # [--option ...]: a synopsis, read as a template
                for part in shell_commands(s):
                    out.append(Command(part, b.line + i + 1, template=synopsis))
    for code, no in inline_code(prose):
        if code.startswith("rotary ") or code.startswith("$ rotary "):
            out.append(Command(code.removeprefix("$ "), no, template=True))
    return out


def shell_commands(line: str) -> list[str]:
    """The ``rotary`` commands of one shell line: split at ``|``, ``&&``, ``||``, ``;``
    (outside quotes), a ``# comment`` dropped, ``time``/``nohup`` and ``VAR=value``
    prefixes skipped."""
    parts, buf, quote, depth, i = [], "", None, 0, 0
    while i < len(line):
        c = line[i]
        if quote:
            buf += c
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            buf += c
        elif c in "[]" or depth:  # inside a synopsis's [...]: '|' is a choice, not a pipe
            depth = max(0, depth + (c == "[") - (c == "]"))
            buf += c
        elif c == "#" and (not buf or buf[-1].isspace()):
            break
        elif line.startswith(("&&", "||"), i):
            parts.append(buf)
            buf = ""
            i += 1
        elif c in "|;" and not (c == "|" and i and not line[i - 1].isspace() and i + 1 < len(line) and not line[i + 1].isspace()):
            parts.append(buf)  # a|b with no spaces is left to the template reading (a choice)
            buf = ""
        else:
            buf += c
        i += 1
    parts.append(buf)
    out = []
    for part in parts:
        words = part.strip()
        while True:
            m = re.match(r"^(?:[A-Za-z_]\w*=\S*|time|nohup)\s+", words)
            if not m:
                break
            words = words[m.end():]
        if words == "rotary" or words.startswith("rotary "):
            out.append(words)
    return out


PLACEHOLDER = "1"  # parses as a number, a path, a position text and a name alike


def _optional_parts(s: str) -> str:
    """A synopsis's ``[...]`` parts, innermost first: ``[--a X | --b Y]`` -> ``--a X`` (the
    first choice), ``[--edge]`` -> ``--edge``; a part that names no option (``[rule
    options]``, ``[POS ...]``) is left out."""
    inner = re.compile(r"\[([^\[\]]*)\]")
    while (m := inner.search(s)) is not None:
        first = re.split(r"\s+\|\s+", m.group(1).strip())[0]
        s = s[: m.start()] + " " + (first if first.startswith("-") else "") + " " + s[m.end():]
    return s


def argv_of(cmd: Command, start_text: str, choices_of) -> list[str] | None:
    """The argument list a command line gives ``rotary`` (without ``rotary``), shell syntax
    resolved: ``$(rotary start)`` -> the standard start, another ``$(…)`` or ``$VAR`` -> a
    placeholder, redirections dropped. From a template also ``[--opt X]`` -> ``--opt X``,
    ``a|b`` -> ``a``, ``…`` dropped, PLACEHOLDERS and ``<words>`` -> a placeholder (the
    first choice after an option with choices, from ``choices_of(command, option)``).
    None for a line about every command (``rotary COMMAND --help``)."""
    s = cmd.text
    s = re.sub(r"\$\(\s*rotary\s+start\b[^)]*\)", lambda m: start_text, s)  # split where unquoted, as a shell would
    s = re.sub(r"\$\([^)]*\)", PLACEHOLDER, s)
    s = re.sub(r"\$\{?[A-Za-z_]\w*\}?", PLACEHOLDER, s)
    if cmd.template:
        s = re.sub(r"<[^<>\s][^<>]*>", PLACEHOLDER, s)
        s = _optional_parts(s).replace("…", " ").replace("...", " ")
    try:
        words = shlex.split(s, comments=False)
    except ValueError:  # an unclosed quote: let the parser see the words as written
        words = s.split()
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if re.fullmatch(r"\d*[<>]&?\d*|&>|>>", w):
            skip = not re.fullmatch(r"\d*>&\d+", w)  # '> file' drops the file; '2>&1' is whole
            continue
        if re.fullmatch(r"\d*>>?\S+|<\S+", w):
            continue
        out.append(w)
    if out[:1] != ["rotary"]:
        return None
    out = out[1:]
    if not cmd.template:
        return out
    if out and re.fullmatch(r"[A-Z][A-Z_-]*", out[0]):
        return None  # rotary COMMAND ...: about every command
    command = out[0] if out else None
    resolved = []
    for i, w in enumerate(out):
        if "|" in w and not w.startswith("-"):
            w = w.split("|")[0]
        if i and re.fullmatch(r"[A-Z][A-Z0-9_:-]*", w):
            choices = choices_of(command, resolved[-1]) if resolved else None
            w = str(choices[0]) if choices else PLACEHOLDER
        resolved.append(w)
    return resolved

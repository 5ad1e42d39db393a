"""Print the README's results table from the metadata of solved databases.

    python scripts/results_table.py                 # every database under rotary-db/
    python scripts/results_table.py path/to/db ...

Nothing is re-solved: each row is read from a database's own header and tier records.
"""

from __future__ import annotations

import sys
from pathlib import Path

from solver.db.database import open_db


def _size(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def row(path: Path) -> str:
    with open_db(path) as db:
        tiers = [db.tier_meta[t[0]] for t in db.header["tiers"] if t[0] in db.tier_meta]
        done = "" if len(tiers) == len(db.header["tiers"]) else f" ({len(tiers)}/{len(db.header['tiers'])} tiers)"
        pos = sum(t["positions"] for t in tiers)
        w, l, d = (sum(t[k] for t in tiers) for k in ("wins", "losses", "draws"))
        lw = max((t["longest_win"] for t in tiers if t["longest_win"] is not None), default=None)
        secs = sum(t["seconds"] for t in tiers)
        size = db.store.size_on_disk() / 1e6
        peaks = [t["peak_kb"] for t in tiers if t.get("peak_kb")]
        peak = _size(max(peaks) * 1024) if peaks else "-"  # solves before peak_kb was recorded: -
        pct = lambda x: f"{100 * x / pos:.1f}%" if pos else "-"  # noqa: E731
        return (
            f"| {db.description}{done} | {pos:,} | {w:,} ({pct(w)}) | {l:,} ({pct(l)}) | {d:,} ({pct(d)}) "
            f"| {lw if lw is not None else '-'} | {secs:.1f} s | {peak} | {size:.1f} MB |"
        )


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(p for p in Path("rotary-db").iterdir() if (p / "data.mdb").exists())
    print("| configuration | positions | wins | losses | draws | longest win | solve time | peak memory | database |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p in paths:
        print(row(p))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

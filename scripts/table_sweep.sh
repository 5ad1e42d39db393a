#!/bin/bash
# The three published one-thread proofs of docs/pns.md (the standard start, after e4+3, after d3+0)
# at --tt-bits N (default 22): value, plies, nodes, seconds of each.  usage: scripts/table_sweep.sh [N]
R=${ROT:-rotary}
B=${1:-22}
S="$($R start)"
pos() { $R moves "$S" --json | python3 -c "import json,sys; d=json.load(sys.stdin); print([m['position'] for m in d['moves'] if m['move']=='$1'][0])"; }
for P in "$S" "$(pos e4+3)" "$(pos d3+0)"; do $R prove "$P" --no-store --json --tt-bits $B | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['value'], d['plies'], d['nodes'], d['seconds'])"; done

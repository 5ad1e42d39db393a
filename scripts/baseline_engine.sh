#!/bin/sh
# A pinned copy of the engine at a git tag or commit, as a match player:
#   scripts/baseline_engine.sh DIR [REV]      (REV defaults to the baseline engine's commit,
#                                              the tag baseline-engine where a clone has it)
# writes the tree of REV into DIR (git archive: no checkout, no worktree), makes DIR/.venv,
# installs it there and warms numba's cache of its kernels; then
#   rotary match --a "rotary engine" --b "DIR/.venv/bin/rotary engine" ...
# plays the current engine against it.
set -eu
dir=${1:?usage: scripts/baseline_engine.sh DIR [REV]}
# the baseline's commit itself: tags do not travel with every clone
rev=${2:-d75bc08aeeeaa2b07bbc2ab1d68ebefecb78f451}
python=${PYTHON:-python3}
git rev-parse -q --verify "$rev^{commit}" >/dev/null \
    || { echo "baseline: no revision '$rev' in this clone (git fetch --tags, or give REV)" >&2; exit 2; }
if [ -e "$dir/pyproject.toml" ]; then
    echo "baseline: $dir exists; keeping it" >&2
else
    mkdir -p "$dir"
    git archive "$rev" | tar -x -C "$dir"
fi
[ -x "$dir/.venv/bin/rotary" ] || { "$python" -m venv "$dir/.venv" && "$dir/.venv/bin/pip" install -q -e "$dir"; }
# one search on each board compiles (or loads) the kernels, so no match game pays for it
printf 'isready\nposition %s\ngo nodes 2000\nquit\n' "$("$dir/.venv/bin/rotary" start)" \
    | "$dir/.venv/bin/rotary" engine >/dev/null
printf 'isready\nposition %s\ngo nodes 2000\nquit\n' "$("$dir/.venv/bin/rotary" start)" \
    | "$dir/.venv/bin/rotary" engine --capture >/dev/null
echo "baseline: $dir/.venv/bin/rotary engine ($rev)"

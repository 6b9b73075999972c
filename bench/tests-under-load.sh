#!/usr/bin/env bash
# bench/tests-under-load.sh — the README's `cargo test`, from a fresh clone, N times in a row
# while another `cargo build` keeps every CPU busy (issue 31's "done means").
#
#   bench/tests-under-load.sh             # 3 rounds
#   bench/tests-under-load.sh --runs 5
#
# The load is a loop of `cargo clean && cargo build --release` of a second clone (its own target
# directory), so it compiles the whole time the tests run. `--no-fail-fast`, so that a round's
# totals count every test file (its exit status is the README command's). Prints each round's wall clock,
# passed/failed totals and the load's busy share; exit 0 when every round passed, 1 otherwise,
# 2 for a usage error. Both clones live in one `mktemp -d` directory, removed on exit.
set -euo pipefail

usage() { echo "usage: bench/tests-under-load.sh [--runs N]" >&2; exit 2; }
runs=3
while [ $# -gt 0 ]; do
    case $1 in
        --runs) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
        -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) usage ;;
    esac
done
case $runs in '' | *[!0-9]* | 0) echo "tests-under-load: --runs takes a count of 1 or more, not '$runs'" >&2; exit 2 ;; esac

repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d /tmp/oslab-tests-under-load.XXXXXX)
loadpid=
cleanup() {
    if [ -n "$loadpid" ]; then kill -- "-$loadpid" 2>/dev/null || true; wait "$loadpid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

git clone -q "$repo" "$work/tests"
git clone -q "$repo" "$work/load"
echo "commit $(git -C "$work/tests" rev-parse --short HEAD); $(nproc) CPUs; $runs rounds of cargo test under a cargo build loop"

# The load: its own process group, so that cleanup stops the builds with it.
set -m
(cd "$work/load" && while :; do cargo clean -q 2>/dev/null; cargo build -q --release >/dev/null 2>&1 || true; done) &
loadpid=$!
set +m

cpu_snapshot() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print t, $5 + $6 }' /proc/stat; }
failed_rounds=0
for round in $(seq 1 "$runs"); do
    read -r t0 i0 <<<"$(cpu_snapshot)"
    start=$(date +%s)
    rc=0
    (cd "$work/tests" && cargo test --no-fail-fast >"$work/round$round.log" 2>&1) || rc=$?
    read -r t1 i1 <<<"$(cpu_snapshot)"
    busy=$(awk -v t="$((t1 - t0))" -v i="$((i1 - i0))" 'BEGIN { printf "%.0f", (t > 0 ? 100 * (1 - i / t) : 0) }')
    totals=$(awk '/^test result:/ { p += $4; f += $6 } END { printf "%d passed, %d failed", p, f }' "$work/round$round.log")
    echo "round $round: exit $rc, $totals, $(( $(date +%s) - start )) s, CPUs busy $busy%"
    if [ "$rc" -ne 0 ]; then
        failed_rounds=$((failed_rounds + 1))
        grep -E '^(test .* FAILED|---- .* stdout ----|failures:)' "$work/round$round.log" | head -20 || true
        cp "$work/round$round.log" "/tmp/tests-under-load-round$round.log"
        echo "  (log kept in /tmp/tests-under-load-round$round.log)"
    fi
done
echo "$((runs - failed_rounds)) of $runs rounds passed"
[ "$failed_rounds" -eq 0 ]

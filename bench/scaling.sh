#!/usr/bin/env bash
# bench/scaling.sh — check what `--copies` reports, and print the classic scaling curves.
#
# A benchmark, not a test: it measures and reports. Exit 0 whether or not the targets are met
# (unless --strict), 1 if something failed to run.
#
#   Part 1  a path that must scale: `syscall.getppid` (a system call that touches nothing
#           shared) with --copies 1,N in processes. Target: efficiency at N >= 0.90 (the
#           method itself costs the copies nothing).
#   Part 2  one copy is one copy: `scale.mmap_munmap` alone and with --copies 1, alternated.
#           Target: ratio of medians within 0.90-1.10.
#   Part 3  the classic curves (informational): page faults (processes, threads),
#           mmap/munmap (processes, threads), open/close (private, shared directory), fork,
#           pipe pairs, each with --copies 1,N; the efficiency at N and switches per op.
#
# Usage: bench/scaling.sh [--quick] [--strict]
#   --quick   oslab's --quick and one iteration of part 2 instead of three
#   --strict  exit 1 if a target is missed

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

QUICK=()
ITERATIONS=3
STRICT=0
while (($#)); do
    case "$1" in
        --quick) QUICK=(--quick); ITERATIONS=1 ;;
        --strict) STRICT=1 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "scaling.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

die() { echo "scaling.sh: $*" >&2; exit 1; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DB="$WORK/oslab.db"
(cd "$ROOT" && cargo build --release --quiet) || die "cargo build failed"
OSLAB="$ROOT/target/release/oslab"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
command -v jq >/dev/null || die "jq is needed"
MISSED=0

echo "scaling.sh on $CPU_MODEL, CPUs $ONLINE; other oslab processes: $(foreign_oslab)"

# Part 1
oslab_to "$WORK/p1.json" run syscall.getppid -p entry=call --copies 1,N --repeat 1 --json "${QUICK[@]}"
eff=$(jq -r '.scaling[0].points[-1] | "\(.copies) \(.efficiency)"' "$WORK/p1.json")
read -r n e <<<"$eff"
ok=$(awk -v e="$e" 'BEGIN { print (e != "null" && e >= 0.90) ? "PASS" : "MISS" }')
[ "$ok" = PASS ] || MISSED=1
printf 'part 1  syscall.getppid, %s copies in processes: efficiency %.3f (target >= 0.90) %s\n' "$n" "$e" "$ok"

# Part 2
ratios=()
for _ in $(seq "$ITERATIONS"); do
    oslab_to "$WORK/alone.json" run scale.mmap_munmap --repeat 1 --json "${QUICK[@]}"
    oslab_to "$WORK/one.json" run scale.mmap_munmap --copies 1 --repeat 1 --json "${QUICK[@]}"
    a=$(jq '.configurations[0].median' "$WORK/alone.json")
    b=$(jq '.configurations[0].median' "$WORK/one.json")
    ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')")
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
ok=$(awk -v r="$median" 'BEGIN { print (r >= 0.90 && r <= 1.10) ? "PASS" : "MISS" }')
[ "$ok" = PASS ] || MISSED=1
echo "part 2  scale.mmap_munmap --copies 1 / alone: ${ratios[*]} (median $median, target 0.90-1.10) $ok"

# Part 3
echo "part 3  the classic curves, --copies 1,N (efficiency at N; switches per op at N)"
curve() {
    local label=$1
    shift
    oslab_to "$WORK/c.json" run "$@" --copies 1,N --repeat 1 --json "${QUICK[@]}"
    jq -r --arg l "$label" '.scaling[] | "\($l)\t\(.name)\t\(.points[-1].copies)\t\(.points[0].total_ops_per_s | floor)\t\(.points[-1].total_ops_per_s | floor)\t\(.points[-1].efficiency // "–" | if type == "number" then . * 100 | round | tostring + "%" else . end)\t\(.points[-1].switches_per_op | . * 1e4 | round / 1e4)"' "$WORK/c.json"
}
{
    printf 'question\tconfiguration\tN\t1 copy ops/s\tN copies ops/s\tefficiency\tswitches/op\n'
    curve "faults, processes" pagefault.anon -p thp=off -p size=64M
    curve "faults, threads" pagefault.anon -p thp=off -p size=64M --copy-mode threads
    curve "mmap, processes" scale.mmap_munmap
    curve "mmap, threads" scale.mmap_munmap --copy-mode threads
    curve "open/close" scale.open_close --dir "$WORK"
    curve "fork" process.fork
    curve "pipe pairs" ctxswitch.pipe
} | column -t -s $'\t'

if ((MISSED)); then
    echo "a target was missed"
    ((STRICT)) && exit 1
fi
exit 0

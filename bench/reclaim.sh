#!/usr/bin/env bash
# bench/reclaim.sh — run the reclaim lab (`--suite reclaim`) and check what it must show.
#
# A benchmark, not a test: it measures and reports. Exit 0 whether or not the targets are met
# (unless --strict), 1 if something failed to run.
#
#   Part 1  `--suite reclaim` with a swap area made for the run (root; `--swap 1G`, or
#           `--swap zram:1G` with --zram): a table per configuration and pressure level of the
#           time per access and what reclaim did per pass. Targets: every result ok; at -25%
#           headroom with swap the anonymous configurations swap out (pswpout > 0) and the
#           file configurations read their file back (refaults > 0); the swap area is gone
#           afterwards; the quick suite's wall clock (informational, about 30 s here).
#   Part 2  the suite again, then `oslab compare` of the two runs: on one kernel, how many of
#           the reclaim counters it compares does it call changed (informational: the noise
#           of the counters between two runs of one kernel, the floor a patched kernel's
#           change must rise above).
#
# Usage: bench/reclaim.sh [--quick] [--zram] [--strict]
#   --quick   oslab's --quick (128 MiB regions instead of 1 GiB)
#   --zram    swap on a zram device instead of a swap file in /var/tmp
#   --strict  exit 1 if a target is missed

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

QUICK=()
SWAP=1G
STRICT=0
while (($#)); do
    case "$1" in
        --quick) QUICK=(--quick) ;;
        --zram) SWAP=zram:1G ;;
        --strict) STRICT=1 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "reclaim.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

die() { echo "reclaim.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "--swap needs root: run it as root"
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
check() { # NAME OK(0/1)
    if [ "$2" = 1 ]; then echo "  $1: PASS"; else echo "  $1: MISS"; MISSED=1; fi
}

echo "reclaim.sh on $CPU_MODEL, CPUs $ONLINE, kernel $(uname -r); other oslab processes: $(foreign_oslab)"
echo "swap before: $(tail -n +2 /proc/swaps | wc -l) areas; --swap $SWAP"

# Part 1
start=$(date +%s.%N)
oslab_to "$WORK/a.json" run --suite reclaim --swap "$SWAP" --repeat 1 --json "${QUICK[@]}" --dir "$WORK"
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
echo "part 1  --suite reclaim ${QUICK[*]}: $wall s"
printf '  %-42s %9s %8s %8s %8s %8s %8s %7s\n' configuration "ns/acc" scanned stolen activ. refault swapout majflt
jq -r '.configurations[] | [.label, .median,
    ((.reclaim.headline // []) | map({(.name): .per_sample}) | add // {}) as $h
    | $h.scanned, $h.stolen, $h.activated, $h.refaulted, $h["swapped out"], $h["major faults"]]
    | @tsv' "$WORK/a.json" |
    while IFS=$'\t' read -r label median scanned stolen act refault out maj; do
        printf '  %-42s %9.2f %8.0f %8.0f %8.0f %8.0f %8.0f %7.1f\n' "$label" "$median" \
            "${scanned:-0}" "${stolen:-0}" "${act:-0}" "${refault:-0}" "${out:-0}" "${maj:-0}"
    done
bad=$(jq '[.configurations[] | select(.status != "ok")] | length' "$WORK/a.json")
check "every result ok ($bad not)" "$([ "$bad" = 0 ] && echo 1 || echo 0)"
swapped=$(jq '[.configurations[] | select(.label | test("^anonymous.*-25%$"))
    | .reclaim.headline[] | select(.name == "swapped out") | .per_sample] | min // 0' "$WORK/a.json")
check "anonymous at -25% with swap swapped out ($swapped pages per pass)" \
    "$(awk -v v="$swapped" 'BEGIN { print (v > 0) ? 1 : 0 }')"
refault=$(jq '[.configurations[] | select(.label | test("^file.*-25%"))
    | .reclaim.headline[] | select(.name == "refaulted") | .per_sample] | min // 0' "$WORK/a.json")
check "file at -25% read back ($refault pages per pass at least)" \
    "$(awk -v v="$refault" 'BEGIN { print (v > 0) ? 1 : 0 }')"
left=$(grep -c 'oslab-swap-\|/dev/zram' /proc/swaps || true)
files=$(find /var/tmp -maxdepth 1 -name 'oslab-swap-*' | wc -l)
check "no swap area left ($left areas, $files files)" "$([ "$left$files" = 00 ] && echo 1 || echo 0)"

# Part 2
oslab_to "$WORK/b.json" run --suite reclaim --swap "$SWAP" --repeat 1 --json "${QUICK[@]}" --dir "$WORK"
a=$(jq .run_id "$WORK/a.json")
b=$(jq .run_id "$WORK/b.json")
oslab_to "$WORK/cmp.json" compare "$a" "$b" --json
jq -r '.reclaim | "part 2  two runs of one kernel: \(length) reclaim counters compared, \(map(select(.verdict != "no change")) | length) called changed: \(map(select(.verdict != "no change")) | map("\(.configuration | sub("mmap.access "; "")) \(.counter) \(.verdict)") | join("; "))"' "$WORK/cmp.json"

if [ "$STRICT" = 1 ] && [ "$MISSED" = 1 ]; then exit 1; fi
exit 0

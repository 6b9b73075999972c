#!/usr/bin/env bash
# bench/kernel_canary.sh — can the host change what entering the kernel costs while the CPU's
# speed stays put, and does oslab's kernel canary (16 null calls) follow it?
#
# A benchmark, not a test: it measures and reports. It builds bench/kernel_canary.c, runs it
# pinned to one CPU for SECONDS (a loop of 1000 getppid calls, the CPU canary's chain, the 16
# calls of the kernel canary, each line the medians over about a second) and prints the range
# of each (max/min − 1) and how closely the kernel canary and the CPU canary follow the loop
# (Pearson's correlation over the lines). docs/measurement.md §5 has the figures of 2026-12-06.
# Linux or another Unix with a C compiler; keep the machine otherwise idle.
#
# Usage: bench/kernel_canary.sh [--seconds N] [--cpu C] [--keep FILE]
#   --seconds N   how long (default 180)
#   --cpu C       the CPU to pin to (default 0)
#   --keep FILE   keep the lines in FILE
set -euo pipefail

SECONDS_TO_RUN=180
CPU=0
KEEP=
while [ $# -gt 0 ]; do
    case $1 in
    --seconds) SECONDS_TO_RUN=$2; shift 2 ;;
    --cpu) CPU=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "kernel_canary.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
${CC:-cc} -O2 -o "$WORK/kernel_canary" "$HERE/kernel_canary.c"
echo "kernel_canary: ${SECONDS_TO_RUN} s pinned to CPU $CPU; kernel $(uname -r)" >&2
"$WORK/kernel_canary" "$SECONDS_TO_RUN" "$CPU" >"$WORK/lines"
[ -n "$KEEP" ] && cp "$WORK/lines" "$KEEP"
python3 - "$WORK/lines" <<'PY'
import statistics as st, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 4]
if len(rows) < 3:
    sys.exit("kernel_canary.sh: fewer than 3 lines: run longer (--seconds)")
loop, cpu, kernel = ([r[i] for r in rows] for i in (1, 2, 3))
span = lambda v: f"{min(v):.1f}–{max(v):.1f} ({(max(v) / min(v) - 1) * 100:.1f}%)"
print(f"{len(rows)} medians over {rows[-1][0]:.0f} s")
print(f"  loop of 1000 null calls   {span(loop)} ns per call")
print(f"  kernel canary (16 calls)  {span(kernel)} ns per call; correlation with the loop "
      f"{st.correlation(loop, kernel):.3f}")
print(f"  CPU canary (chain)        {span(cpu)} ns; correlation with the loop "
      f"{st.correlation(loop, cpu):.3f}")
PY

#!/usr/bin/env bash
# bench/context1.sh — UnixBench's Pipe-based Context Switching with 1 copy, three ways, each
# pass with where its pair ran.
#
# bench/unixbench.sh compares oslab's context1 pass with `Run`'s. This script takes that
# comparison apart. It alternates two programs, one 10-s pass each, idle for a while before
# every pass, the first program alternating from round to round:
#
#   bare    oslab's pass (`oslab run --suite unixbench unixbench.context1 --copies 1
#           --passes 1`) against UnixBench's program run bare (`pgms/context1 10`)
#   run     UnixBench's program under `Run` (`./Run -c 1 -i 1 context1`) against the same
#           program run bare
#   pinned  oslab's round trip pinned to one CPU (`oslab run unixbench.context1 -p
#           placement=same --cpu CPU --budget 10 --repeat 1`: the median of its batches)
#           against the bare program pinned there (`taskset -c CPU pgms/context1 10`)
#   three   oslab's pass, `Run`'s and the bare program's, in one rotation: each round runs
#           the three, the order turned by one a round
#
# During every unpinned pass a sampler reads, ten times a second, the CPU each process of the
# pair last ran on (/proc/PID/stat, field 39) and its CPU time. It prints the share of samples
# in which both processes had last run on the same CPU, and each one's CPU seconds.
#
# Usage: bench/context1.sh [--src DIR] [--rounds R] [--idle SECONDS] [--binary OSLAB]
#                          [--keep DIR] bare|run|pinned|three
#   --src DIR         byte-unixbench's source (default: $UNIXBENCH_SRC, else ./byte-unixbench)
#   --rounds R        rounds of the programs (default 5)
#   --idle SECONDS    idle this long before every pass (default 20)
#   --binary OSLAB    the oslab to run (default: cargo build --release)
#   --keep DIR        keep every pass's output in DIR (created)
#
# Prints a line per pass, then per round the ratio of each program over each later one, and
# their medians. Needs Linux (/proc, taskset). The host's own drift spoils both programs alike
# only when they alternate closely: nothing else should run (docs/unixbench.md, "Pipe-based
# Context Switching with 1 copy: where the pair ran"). Exit status: 0 when everything ran or
# the source is absent, 1 when something failed, 2 for a usage error.

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
die() { echo "context1.sh: $*" >&2; exit 1; }

SRC=
ROUNDS=5
IDLE=20
BINARY=
KEEP=
MODE=
while (($#)); do
    case $1 in
        --src) SRC=${2:?--src needs a directory}; shift 2 ;;
        --rounds)
            [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "context1.sh: --rounds needs a whole number" >&2; exit 2; }
            ROUNDS=$2
            shift 2
            ;;
        --idle)
            [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "context1.sh: --idle needs whole seconds" >&2; exit 2; }
            IDLE=$2
            shift 2
            ;;
        --binary)
            [[ -x ${2:-} ]] || { echo "context1.sh: --binary needs an executable oslab" >&2; exit 2; }
            BINARY=$2
            shift 2
            ;;
        --keep) KEEP=${2:?--keep needs a directory}; shift 2 ;;
        bare | run | pinned | three) MODE=$1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "context1.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
[[ -n $MODE ]] || { echo "context1.sh: say which comparison: bare, run, pinned or three (try --help)" >&2; exit 2; }
[[ -r /proc/self/stat ]] && command -v taskset >/dev/null || die "this needs Linux's /proc and taskset"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPT=context1.sh
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
# shellcheck source=bench/unixbench_src.sh
source "$ROOT/bench/unixbench_src.sh"
unixbench_prepare
OUT=${KEEP:-$WORK/passes}
mkdir -p "$OUT" || die "--keep: cannot create $OUT"
unixbench_build "$WORK"
UB=$WORK/UnixBench
echo "$(uname -sr), $CPU_MODEL, CPUs online $ONLINE; oslab $("$OSLAB" --version 2>/dev/null | head -n1); $MODE, $ROUNDS rounds, ${IDLE}s idle before each pass"

# The sampler: comm names (comma-separated), a file whose existence stops it, the window (s).
# It also stops when the pass that started it is gone (it was reparented: the script died or
# was killed) or after ten minutes, so that it never outlives the script.
SAMPLER=$WORK/sample.py
cat >"$SAMPLER" <<'PY'
import os, sys, time
names, stop, window = set(sys.argv[1].split(",")), sys.argv[2], float(sys.argv[3])
tick = os.sysconf("SC_CLK_TCK")
parent, deadline = os.getppid(), time.monotonic() + 600
samples = []  # (time, {pid: (last CPU, CPU seconds)})
while not os.path.exists(stop):
    if os.getppid() != parent or time.monotonic() > deadline:
        sys.exit()
    t, snap = time.monotonic(), {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            s = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        if s[s.index("(") + 1:s.rindex(")")] in names:
            f = s[s.rindex(")") + 2:].split()
            snap[int(pid)] = (int(f[36]), (int(f[11]) + int(f[12])) / tick)
    samples.append((t, snap))
    time.sleep(0.1)
# The pair: the two processes that used the most CPU in the last `window` seconds (the pass).
end = samples[-1][0] if samples else 0
win = [s for t, s in samples if t >= end - window - 0.5]
first, last = {}, {}
for s in win:
    for pid, (_, cpu_s) in s.items():
        first.setdefault(pid, cpu_s)
        last[pid] = cpu_s
pair = sorted(last, key=lambda p: last[p] - first[p], reverse=True)[:2]
if len(pair) < 2:
    print("pair not found")
    sys.exit()
a, b = pair
both = [(s[a][0], s[b][0]) for s in win if a in s and b in s]
same = sum(x == y for x, y in both) / max(len(both), 1)
print(f"same CPU {same:.2f} of {len(both)} samples, CPU {last[a] - first[a]:.1f} s and {last[b] - first[b]:.1f} s")
PY

# One pass of program $1 in round $2: its rate (lps) on stdout; the pair's placement beside it.
pass() {
    local what=$1 round=$2 out=$OUT/$2.$1 comm=context1 rate
    sync
    sleep "$IDLE"
    [[ $what == oslab* ]] && comm=$(basename "$OSLAB" | cut -c1-15)
    rm -f "$WORK/stop" "$out.place"
    [[ $MODE == pinned ]] || python3 "$SAMPLER" "$comm" "$WORK/stop" 10 >"$out.place" &
    case $what in
        bare) (cd "$UB" && ./pgms/context1 10) >"$out.txt" 2>&1 ;;
        bare-pinned) (cd "$UB" && taskset -c "$CPU" ./pgms/context1 10) >"$out.txt" 2>&1 ;;
        run) (cd "$UB" && ./Run -c 1 -i 1 context1) >"$out.txt" 2>&1 ;;
        oslab) oslab_to "$out.json" run --suite unixbench unixbench.context1 --copies 1 --passes 1 --json ;;
        oslab-pinned) oslab_to "$out.json" run unixbench.context1 -p placement=same --cpu "$CPU" --budget 10 --repeat 1 --json ;;
    esac
    touch "$WORK/stop"
    wait
    case $what in
        bare*) rate=$(awk -F'|' '/^COUNT/ { print $2 / 10; exit }' "$out.txt") ;;
        run) rate=$(awk '/^Pipe-based Context Switching .* lps/ { print $4; exit }' "$out.txt") ;;
        oslab) rate=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["unixbench"][0]["tests"][0]["value"])' "$out.json") ;;
        oslab-pinned) rate=$(python3 -c 'import json, sys; print(1e9 / json.load(open(sys.argv[1]))["configurations"][0]["median"])' "$out.json") ;;
    esac
    [[ -n $rate ]] || die "no figure from $what in round $round (its output: $out.*)"
    printf '  round %d, %-12s %10.1f lps  %s\n' "$round" "$what" "$rate" "$(cat "$out.place" 2>/dev/null || true)" >&2
    echo "$rate"
}

case $MODE in
    bare) PROGRAMS=(oslab bare) ;;
    run) PROGRAMS=(run bare) ;;
    pinned) PROGRAMS=(oslab-pinned bare-pinned) ;;
    three) PROGRAMS=(oslab run bare) ;;
esac
N=${#PROGRAMS[@]}
declare -A RATIOS=()  # "i j" -> the rounds' ratios of program i over program j
for round in $(seq 1 "$ROUNDS"); do
    RATE=()
    # The order turns by one program a round, so that each takes every place in turn.
    for k in $(seq 0 $((N - 1))); do
        i=$(((k + round - 1) % N))
        RATE[i]=$(pass "${PROGRAMS[i]}" "$round")
    done
    for ((i = 0; i < N; i++)); do
        for ((j = i + 1; j < N; j++)); do
            r=$(awk -v a="${RATE[i]}" -v b="${RATE[j]}" 'BEGIN { printf "%.3f", a / b }')
            RATIOS["$i $j"]+=" $r"
            echo "round $round: ${PROGRAMS[i]} / ${PROGRAMS[j]} = $r"
        done
    done
done
for ((i = 0; i < N; i++)); do
    for ((j = i + 1; j < N; j++)); do
        printf '%s\n' ${RATIOS["$i $j"]} | sort -n | awk -v what="${PROGRAMS[i]} / ${PROGRAMS[j]}" \
            '{ r[NR] = $1 } END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
                printf "%s: median %.3f over %d rounds (%.3f-%.3f)\n", what, m, NR, r[1], r[NR] }'
    done
done

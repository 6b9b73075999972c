#!/usr/bin/env bash
# bench/syscall_peers.sh — the system-call ladder's called-path figures beside lmbench and perf.
#
# A benchmark, not a test: it measures and reports. Each round runs, one after the other and
# all pinned to the same CPU: lmbench `lat_syscall` (null, read, write, stat, open), `oslab run`
# of the matching rungs on the called path (`--param entry=call`, the default figure), and
# `perf bench syscall basic`. It prints the medians over the rounds, oslab's difference from
# each peer in percent, and PASS within the ±2 % target, MISS outside.
#
#   lmbench            oslab (entry=call)                what one operation is
#   lat_syscall null   syscall.getppid                   getppid()
#   lat_syscall read   syscall.read  (size=1)            read 1 byte from /dev/zero
#   lat_syscall write  syscall.write (size=1)            write 1 byte to /dev/null
#   lat_syscall stat   syscall.stat  (path=FILE)         stat(FILE)
#   lat_syscall open   syscall.open_close (path=FILE)    open(FILE) + close
#   perf bench syscall basic   syscall.getppid           getppid() through glibc, 10M calls
#
# lmbench is built from its source (github.com/intel/lmbench) into a cache directory
# (${XDG_CACHE_HOME:-~/.cache}/oslab-bench), cloned when the network allows, else taken from
# --lmbench-src DIR (a source tree or a bare git repository). It needs cc and Debian's
# libtirpc-dev (installed with apt-get when missing and run as root). Without lmbench the
# script says why and still compares with perf bench.
#
# Usage: bench/syscall_peers.sh [--rounds N] [--quick] [--file PATH] [--lmbench-src DIR] [--strict]
#   --rounds N          rounds (default 3; --quick: 2 and oslab's --quick)
#   --file PATH         the file stat and open use (default /etc/passwd)
#   --lmbench-src DIR   lmbench source to build when it cannot be cloned
#   --strict            exit 1 if a target is missed
#
# Exit status: 0 when everything ran (PASS or MISS), 1 when something failed to run (or a MISS
# under --strict), 2 for a usage error or a missing tool.

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

ROUNDS=3
QUICK=0
STRICT=0
FILE=/etc/passwd
LMBENCH_SRC=${LMBENCH_SRC:-}
while (($#)); do
    case "$1" in
        --rounds) ROUNDS=${2:?--rounds needs a number}; shift ;;
        --quick) QUICK=1; ROUNDS=2 ;;
        --file) FILE=${2:?--file needs a path}; shift ;;
        --lmbench-src) LMBENCH_SRC=${2:?--lmbench-src needs a directory}; shift ;;
        --strict) STRICT=1 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "syscall_peers.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "syscall_peers.sh: --rounds takes a whole number ≥ 1" >&2; exit 2; }
[[ -r "$FILE" ]] || { echo "syscall_peers.sh: cannot read --file $FILE" >&2; exit 2; }

TARGET_PCT=2
OSLAB_QUICK=()
if ((QUICK)); then OSLAB_QUICK=(--quick); fi

die() {
    echo "syscall_peers.sh: $*" >&2
    exit 1
}

for tool in python3 taskset cc; do
    command -v "$tool" >/dev/null || { echo "syscall_peers.sh: $tool is needed" >&2; exit 2; }
done
command -v perf >/dev/null && perf bench syscall basic --loop 1000 >/dev/null 2>&1 ||
    { echo "syscall_peers.sh: 'perf bench syscall basic' fails; as root: apt-get install -y linux-perf" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OSLAB="$ROOT/target/release/oslab"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/oslab-peers.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
DB="$WORK/peers.db"

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

if command -v cargo >/dev/null; then
    echo "Building oslab (cargo build --release) ..." >&2
    (cd "$ROOT" && cargo build --release --quiet) || die "cargo build --release failed"
fi
[[ -x "$OSLAB" ]] || die "$OSLAB was not built"

# --- lmbench: fetch, build, or say why not ------------------------------------------------

# shellcheck source=bench/lmbench.sh
source "$ROOT/bench/lmbench.sh"
LAT_SYSCALL="$LMBENCH_BIN/lat_syscall"

HAVE_LMBENCH=1
lmbench_build lat_syscall || HAVE_LMBENCH=0

echo "== the system-call ladder's called path beside lmbench and perf bench =="
echo "kernel:      $(uname -r)"
echo "cpu model:   $CPU_MODEL ($(nproc) online: $ONLINE); pinned to cpu$CPU"
for v in spec_rstack_overflow retbleed spectre_v2; do
    f=/sys/devices/system/cpu/vulnerabilities/$v
    [[ -r $f ]] && printf '%-12s %s\n' "$v:" "$(cat "$f")"
done
echo "load:        $(cut -d' ' -f1-3 /proc/loadavg) (load average); other oslab processes now: $(foreign_oslab)"
echo "perf:        $(perf --version)"
if ((HAVE_LMBENCH)); then
    echo "lmbench:     $LAT_SYSCALL"
else
    echo "lmbench:     not run: $LMBENCH_WHY"
fi
echo "oslab:       $("$OSLAB" --version); rounds: $ROUNDS$( ((QUICK)) && echo ' (--quick)')"
echo "file:        $FILE (stat, open)"
echo

# --- one round ------------------------------------------------------------------------------

# lmbench prints e.g. "Simple syscall: 0.1234 microseconds" on stderr: ns.
lmbench_ns() {
    taskset -c "$CPU" "$LAT_SYSCALL" "$@" 2>&1 | awk '/microseconds/ { printf "%.1f\n", $(NF-1) * 1000; f = 1 } END { exit !f }' ||
        die "lat_syscall $* printed no figure"
}

perf_ns() {
    taskset -c "$CPU" perf bench syscall basic >"$WORK/perf.txt" 2>&1 || { cat "$WORK/perf.txt" >&2; die "perf bench failed"; }
    awk '$2 == "usecs/op" { printf "%.1f\n", $1 * 1000; f = 1 } END { exit !f }' "$WORK/perf.txt" ||
        die "no 'usecs/op' line in perf bench's output"
}

RUNGS=(getppid read write stat open_close)
LM_ARGS=("null" "read" "write" "stat $FILE" "open $FILE")
: >"$WORK/figures.tsv"   # round, tool, rung, ns, other oslab processes before/after

for ((round = 1; round <= ROUNDS; round++)); do
    snap=$(idle_snapshot)
    if ((HAVE_LMBENCH)); then
        for i in "${!RUNGS[@]}"; do
            f0=$(foreign_oslab)
            # shellcheck disable=SC2086  # "stat FILE" is two arguments
            ns=$(lmbench_ns ${LM_ARGS[$i]})
            printf '%s\tlmbench\t%s\t%s\t%s\n' "$round" "${RUNGS[$i]}" "$ns" "$f0/$(foreign_oslab)" >>"$WORK/figures.tsv"
        done
    fi
    f0=$(foreign_oslab)
    oslab_to "$WORK/oslab.json" run "${RUNGS[@]/#/syscall.}" --param entry=call --param "path=$FILE" \
        --json --cpu "$CPU" "${OSLAB_QUICK[@]}"
    python3 - "$WORK/oslab.json" "$round" "$f0/$(foreign_oslab)" >>"$WORK/figures.tsv" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
# One figure per rung and round: the pooled median of its processes (an older oslab without
# pooled configurations has one result per rung).
for r in doc.get("configurations", doc["results"]):
    if r.get("median") is None:
        sys.exit(f"oslab: {r['experiment']} status {r['status']}: {r.get('reason')}")
    print(f"{sys.argv[2]}\toslab\t{r['experiment'].split('.', 1)[1]}\t{r['median']:.1f}\t{sys.argv[3]}")
EOF
    f0=$(foreign_oslab)
    printf '%s\tperf\tgetppid\t%s\t%s\n' "$round" "$(perf_ns)" "$f0/$(foreign_oslab)" >>"$WORK/figures.tsv"
    echo "round $round done: other CPUs $(busy_since "$snap")% busy" >&2
done

# --- the table ----------------------------------------------------------------------------

python3 - "$WORK/figures.tsv" "$TARGET_PCT" "$STRICT" <<'EOF'
import statistics, sys
from collections import defaultdict
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
target, strict = float(sys.argv[2]), sys.argv[3] == "1"
figures = defaultdict(list)
dirty = 0
for rnd, tool, rung, ns, others in rows:
    figures[(tool, rung)].append(float(ns))
    dirty += others != "0/0"
print("Per round (ns per operation):")
for (tool, rung), values in sorted(figures.items()):
    print(f"  {tool:8} {rung:11} " + "  ".join(f"{v:9.1f}" for v in values))
print()
print(f"Medians over the rounds; diff = oslab / peer - 1; target ±{target:g}%")
print(f"  {'rung':11} {'oslab call':>11} {'peer':>18} {'peer ns':>9} {'diff':>8}  verdict")
missed = 0
for rung in ["getppid", "read", "write", "stat", "open_close"]:
    o = figures.get(("oslab", rung))
    if not o:
        continue
    om = statistics.median(o)
    peers = [("lmbench", "lat_syscall " + {"getppid": "null", "open_close": "open"}.get(rung, rung))]
    if rung == "getppid":
        peers.append(("perf", "perf bench basic"))
    for tool, name in peers:
        p = figures.get((tool, rung))
        if not p:
            continue
        pm = statistics.median(p)
        diff = 100 * (om / pm - 1)
        ok = abs(diff) <= target
        missed += not ok
        print(f"  {rung:11} {om:11.1f} {name:>18} {pm:9.1f} {diff:+7.1f}%  {'PASS' if ok else 'MISS'}")
print()
print("Spread between the rounds (max/min - 1): how far a rerun moves each tool's figure; the")
print("machine's own noise is the peer's spread, and oslab adds none of its own when its spread")
print("is no wider (issue 34: a quiet window is one where lmbench's spreads are within 3%)")
print(f"  {'rung':11} {'oslab':>8} {'lmbench':>8} {'perf':>8}  oslab's no wider (than lmbench's, else perf's)")
def spread(v):
    return 100 * (max(v) / min(v) - 1) if v and len(v) > 1 and min(v) > 0 else None
def cell(x):
    return f"{x:7.1f}%" if x is not None else f"{'-':>8}"
for rung in ["getppid", "read", "write", "stat", "open_close"]:
    so = spread(figures.get(("oslab", rung)))
    sl = spread(figures.get(("lmbench", rung)))
    sp = spread(figures.get(("perf", rung)))
    if so is None:
        continue
    peer = sl if sl is not None else sp
    verdict = "-" if peer is None else ("yes" if so <= peer else "no")
    print(f"  {rung:11} {cell(so)} {cell(sl)} {cell(sp)}  {verdict}")
if dirty:
    print(f"\n{dirty} measurements ran while other oslab processes were running (their tracepoint "
          "slows every system call on the machine): distrust them.")
sys.exit(1 if strict and missed else 0)
EOF

#!/usr/bin/env bash
# bench/fs.sh — check oslab's file-system figures against fio.
#
# A benchmark, not a test: it measures and reports. Exit 0 whether or not the targets are met
# (unless --strict), 1 if something failed to run, 2 on a usage error or when fio is missing
# and cannot be installed.
#
#   Part 1  sequential 4 KiB writes with O_DIRECT: `fio --rw=write --bs=4k --direct=1
#           --ioengine=psync` against `oslab run fs.write --param sync=direct
#           --param bufsize=4096`, alternated, both pinned to the same CPU.
#   Part 2  sequential 4 KiB buffered reads of a cached file: `fio --rw=read --bs=4k
#           --direct=0 --invalidate=0` (file read once before) against `oslab run fs.read
#           --param cache=warm --param bufsize=4096`, alternated.
#   fio's figure is its runtime divided by its I/O count (mean ns per 4 KiB buffer), with
#   --gtod_reduce=1 (fio's per-I/O latency bookkeeping otherwise adds ~200 ns to a cached
#   read); oslab's is its median per buffer. Target: ratio oslab/fio within 0.85-1.15.
#
# Usage: bench/fs.sh [--quick] [--strict] [--dir DIR]
#   --quick   2 iterations instead of 5, 2 s fio runs, oslab's --quick
#   --strict  exit 1 if a target is missed
#   --dir     the directory to measure in (default: a temporary directory under $PWD)

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

ITERATIONS=5
QUICK=0
STRICT=0
DIR=""
while (($#)); do
    case "$1" in
        --quick) QUICK=1; ITERATIONS=2 ;;
        --strict) STRICT=1 ;;
        --dir) shift; DIR="${1:?--dir needs a directory}" ;;
        -h | --help) usage; exit 0 ;;
        *) echo "fs.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
RATIO_LOW=0.85
RATIO_HIGH=1.15
SIZE=64M
RUNTIME=5
OSLAB_QUICK=()
if ((QUICK)); then RUNTIME=2; OSLAB_QUICK=(--quick); fi

if ! command -v fio >/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        apt-get install -y fio >/dev/null 2>&1 || true
    fi
    if ! command -v fio >/dev/null; then
        echo "fs.sh: fio is missing; install it (Debian/Ubuntu: apt-get install fio)" >&2
        exit 2
    fi
fi
for tool in python3 taskset; do
    command -v "$tool" >/dev/null || { echo "fs.sh: $tool is missing" >&2; exit 2; }
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
(cd "$ROOT" && cargo build --release --quiet) || { echo "fs.sh: build failed" >&2; exit 1; }
OSLAB="$ROOT/target/release/oslab"
TMP=$(mktemp -d)
if [[ -z "$DIR" ]]; then
    DIR=$(mktemp -d "$PWD/.oslab-bench-fs-XXXXXX")
    CLEAN_DIR=1
else
    CLEAN_DIR=0
fi
cleanup() {
    rm -rf "$TMP"
    rm -f "$DIR/fio.dat"
    if ((CLEAN_DIR)); then rm -rf "$DIR"; fi
}
trap cleanup EXIT
CPU=$(($(nproc) - 1))

echo "fs.sh: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "directory $DIR: $(findmnt -n -o FSTYPE,SOURCE,OPTIONS -T "$DIR" | tr -s ' ')"
echo "CPU $CPU, $ITERATIONS iterations, file $SIZE, fio runs ${RUNTIME} s"
echo

fio_ns() { # rw direct -> mean ns per I/O
    local rw=$1 direct=$2
    # The file is laid out with 1 MiB writes, as oslab lays out the file fs.read reads: the
    # page cache keeps it in folios as large as the writes that filled it, and a cached 4 KiB
    # read costs ~1.6x more from a file laid out in 4 KiB writes (measured here).
    if [[ ! -f "$DIR/fio.dat" ]]; then
        dd if=/dev/zero of="$DIR/fio.dat" bs=1M count=${SIZE%M} conv=fsync status=none
    fi
    if [[ $rw == read ]]; then cat "$DIR/fio.dat" >/dev/null; fi
    taskset -c "$CPU" fio --name=oslab-bench --filename="$DIR/fio.dat" --size=$SIZE --bs=4k \
        --rw="$rw" --direct="$direct" --ioengine=psync --invalidate=0 --gtod_reduce=1 --time_based \
        --runtime="$RUNTIME" --output-format=json >"$TMP/fio.json"
    python3 - "$TMP/fio.json" "$rw" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0][sys.argv[2]]
print(f'{job["runtime"] * 1e6 / job["total_ios"]:.1f}')
PY
}

oslab_ns() { # experiment params... -> median ns per buffer (or the status)
    "$OSLAB" --db "$TMP/oslab.db" run "$@" --param size=$SIZE --param bufsize=4096 \
        --dir "$DIR" --cpu "$CPU" "${OSLAB_QUICK[@]}" --json 2>/dev/null >"$TMP/oslab.json" || true
    python3 - "$TMP/oslab.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f'{r["median"]:.1f}' if r["status"] in ("ok", "suspect") else "nan")
if r["status"] != "ok":
    print(f'  oslab {r["experiment"]}: {r["status"]}: {r["reason"]}', file=sys.stderr)
PY
}

MISSED=0
FAILED=0
part() { # title fio_rw fio_direct oslab args...
    local title=$1 rw=$2 direct=$3
    shift 3
    echo "== $title"
    local f=() o=()
    for ((i = 1; i <= ITERATIONS; i++)); do
        local a b
        a=$(fio_ns "$rw" "$direct") || { FAILED=1; a=nan; }
        b=$(oslab_ns "$@") || { FAILED=1; b=nan; }
        printf '  iteration %d: fio %10s ns  oslab %10s ns\n' "$i" "$a" "$b"
        f+=("$a"); o+=("$b")
    done
    python3 - "$RATIO_LOW" "$RATIO_HIGH" "${f[*]}" "${o[*]}" <<'PY' || MISSED=1
import statistics, sys
low, high = float(sys.argv[1]), float(sys.argv[2])
f = [float(x) for x in sys.argv[3].split() if x != "nan"]
o = [float(x) for x in sys.argv[4].split() if x != "nan"]
if not f or not o:
    print("  FAILED: no figures"); sys.exit(1)
mf, mo = statistics.median(f), statistics.median(o)
ratio = mo / mf
ok = low <= ratio <= high
print(f"  median fio {mf:.0f} ns ({4096 / mf * 1e3:.0f} MB/s), oslab {mo:.0f} ns "
      f"({4096 / mo * 1e3:.0f} MB/s), ratio oslab/fio {ratio:.3f}: "
      f"{'PASS' if ok else 'MISS'} (target {low}-{high})")
sys.exit(0 if ok else 1)
PY
    echo
}

part "sequential 4 KiB O_DIRECT writes" write 1 fs.write --param sync=direct
part "sequential 4 KiB buffered reads, cached" read 0 fs.read --param cache=warm

if ((FAILED)); then exit 1; fi
if ((STRICT && MISSED)); then exit 1; fi
exit 0

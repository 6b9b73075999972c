#!/usr/bin/env bash
# bench/unixbench.sh — oslab's `--suite unixbench` beside UnixBench itself, test by test.
#
# A benchmark, not a test: it measures and reports. When byte-unixbench's source is at hand
# (UNIXBENCH_SRC, --src DIR, or ./byte-unixbench; the repository root or its UnixBench/
# folder), it copies it to a temporary directory, builds it there (make; needs cc, make and
# perl), runs UnixBench's twelve index tests with one copy (`Run -c 1 -i N dhry2reg
# whetstone-double execl fstime fsbuffer fsdisk pipe context1 spawn shell1 shell8 syscall`),
# then `oslab run --suite unixbench --json`, and prints per test oslab's result and
# UnixBench's in UnixBench's unit, their ratio, and PASS within the ±5 % target, MISS outside
# (docs/unixbench.md explains the tests that miss it and why). Without the source it says
# how to get it and exits 0; it never downloads anything itself.
#
# Usage: bench/unixbench.sh [--src DIR] [--iterations N] [--quick] [--binary OSLAB] [--strict]
#   --src DIR         byte-unixbench's source (default: $UNIXBENCH_SRC, else ./byte-unixbench)
#   --iterations N    UnixBench's -i (default 1; UnixBench's own default is 10)
#   --quick           oslab's --quick (UnixBench has no such mode: its tests run 10–60 s each)
#   --binary OSLAB    the oslab to run (default: cargo build --release)
#   --strict          exit 1 if a target is missed
#
# UnixBench takes about six minutes with -i 1 (its file copies sync and sleep, its shell
# tests run a minute each). Both run unpinned and one after the other; other load on the
# machine spoils both. Exit status: 0 when everything ran (PASS or MISS) or the source is
# absent, 1 when something failed to run (or a MISS under --strict), 2 for a usage error.

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

SRC=${UNIXBENCH_SRC:-}
ITERATIONS=1
QUICK=()
BINARY=
STRICT=0
while (($#)); do
    case $1 in
        --src) SRC=${2:?--src needs a directory}; shift 2 ;;
        --iterations)
            [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "unixbench.sh: --iterations needs a whole number" >&2; exit 2; }
            ITERATIONS=$2
            shift 2
            ;;
        --quick) QUICK=(--quick); shift ;;
        --binary)
            [[ -x ${2:-} ]] || { echo "unixbench.sh: --binary needs an executable oslab" >&2; exit 2; }
            BINARY=$2
            shift 2
            ;;
        --strict) STRICT=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "unixbench.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done

die() {
    echo "unixbench.sh: $*" >&2
    exit 1
}

[[ -z $SRC && -d ./byte-unixbench ]] && SRC=./byte-unixbench
if [[ -n $SRC && -d $SRC/UnixBench ]]; then SRC=$SRC/UnixBench; fi
if [[ -z $SRC || ! -f $SRC/Run || ! -f $SRC/src/fstime.c ]]; then
    cat <<'HOW'
unixbench.sh: byte-unixbench's source is not here, so there is nothing to compare with.
  Get it (it is GPL-2.0, and oslab does not ship it):
    git clone https://github.com/kdlucas/byte-unixbench
  then run this script from the directory holding byte-unixbench/, or point to it:
    UNIXBENCH_SRC=/path/to/byte-unixbench bench/unixbench.sh
  oslab's own figures need no source: oslab run --suite unixbench
HOW
    exit 0
fi
for tool in cc make perl python3; do
    command -v "$tool" >/dev/null || die "$tool is needed to build and run UnixBench and to read the figures"
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z $BINARY ]]; then
    (cd "$ROOT" && cargo build --release --quiet) || die "cargo build --release failed"
    BINARY=$ROOT/target/release/oslab
fi
OSLAB=$BINARY
WORK=$(mktemp -d "${TMPDIR:-/tmp}/oslab-unixbench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
DB=$WORK/unixbench.db
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

echo "UnixBench from $SRC, built in $WORK; oslab $("$OSLAB" --version 2>/dev/null | head -n1)"
echo "$(uname -sr), $CPU_MODEL, CPUs online $ONLINE"
cp -r "$SRC" "$WORK/UnixBench"
make -C "$WORK/UnixBench" >"$WORK/make.log" 2>&1 || { tail -n 20 "$WORK/make.log" >&2; die "UnixBench's make failed"; }

TESTS=(dhry2reg whetstone-double execl fstime fsbuffer fsdisk pipe context1 spawn shell1 shell8 syscall)
echo "Running UnixBench (Run -c 1 -i $ITERATIONS ${TESTS[*]}) ..." >&2
before=$(idle_snapshot)
(cd "$WORK/UnixBench" && ./Run -c 1 -i "$ITERATIONS" "${TESTS[@]}") >"$WORK/unixbench.txt" 2>"$WORK/unixbench.err" ||
    { tail -n 20 "$WORK/unixbench.err" >&2; die "UnixBench's Run failed"; }
ub_busy=$(busy_since "$before")

echo "Running oslab (run --suite unixbench ${QUICK[*]}) ..." >&2
before=$(idle_snapshot)
oslab_to "$WORK/oslab.json" run --suite unixbench --json "${QUICK[@]}"
oslab_busy=$(busy_since "$before")
echo "other CPUs busy: ${ub_busy}% during UnixBench, ${oslab_busy}% during oslab; other oslab processes now: $(foreign_oslab)"
echo

python3 - "$WORK/unixbench.txt" "$WORK/oslab.json" "$STRICT" <<'PY'
import json, re, sys

ub_text, oslab_json, strict = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3] == "1"
# UnixBench's index table: "LABEL   BASELINE   RESULT   INDEX", one block per copies count.
block = ub_text.split("System Benchmarks Index Values", 1)
if len(block) < 2:
    sys.exit("unixbench.sh: no index table in UnixBench's report")
ub = {}
for line in block[1].splitlines()[1:]:
    m = re.match(r"^(\S.*?)\s{2,}([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", line)
    if m:
        ub[m.group(1).strip()] = float(m.group(3))
    elif line.startswith("System Benchmarks Index Score"):
        ub["score"] = float(line.split()[-1])
        break
doc = json.load(open(oslab_json))
groups = [g for g in (doc.get("unixbench") or []) if g["copies"] == 1]
if not groups:
    sys.exit("unixbench.sh: oslab's JSON has no 1-copy UnixBench table")
rows = [("test", "unit", "oslab", "UnixBench", "oslab/UB", "status", "")]
missed = 0
for t in groups[0]["tests"]:
    theirs = ub.get(t["test"])
    ratio = t["value"] / theirs if theirs else None
    verdict = "" if ratio is None else ("PASS" if abs(ratio - 1) <= 0.05 else "MISS")
    missed += verdict == "MISS"
    rows.append((t["test"], t["unit"], f"{t['value']:.1f}",
                 "–" if theirs is None else f"{theirs:.1f}",
                 "–" if ratio is None else f"{ratio:.3f}", t["status"], verdict))
score = groups[0]["score"]
rows.append(("System Benchmarks Index Score", "", "–" if score is None else f"{score:.1f}",
             f"{ub['score']:.1f}" if "score" in ub else "–",
             f"{score / ub['score']:.3f}" if score and ub.get("score") else "–", "", ""))
widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
for r in rows:
    print("  ".join(c.ljust(w) if i in (0, 1, 5, 6) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
print(f"\n{missed} of {len(groups[0]['tests'])} tests outside ±5 % (docs/unixbench.md says why)")
sys.exit(1 if strict and missed else 0)
PY

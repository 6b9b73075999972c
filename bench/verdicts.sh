#!/usr/bin/env bash
# bench/verdicts.sh — does `oslab compare` say "no change" when nothing changed, and "slower"
# when something did?
#
# A benchmark, not a test: it measures and reports. It makes N runs of the same experiments
# (A) into one database, each alternating with a run of a known cost (B: `syscall.read
# --param size=SIZE`, whose extra cost is the kernel copying SIZE bytes instead of one), and
# then asks `oslab compare` about every pair of runs:
#   same build, same experiments   every pair A_i, A_j (i < j): the share of configurations
#                                  whose verdict is "no change" or "within noise"
#                                  (target >= 95%: a false alarm in 1 of 20 at most)
#   a known slowdown               every pair A_i, B_j: syscall.read size=1 of A against the
#                                  size=SIZE read of B, relabelled size=1 in a second database
#                                  (exported, renamed, imported) so that compare pairs them:
#                                  the share called "slower" (target >= 95%)
# Each row of the second part shows the ratio compare measured, so the size of the cost it
# was asked to see is in the output, not assumed. A last part, with no target, compares the
# same runs as sets (A's against B's; A's odd runs against its even ones), each run one
# observation. The runs share one database, as a user's
# do: from the fifth run on, their intervals are floored by the earlier runs' spread
# (--history 4 gives every counted run that floor, as in a database that has been in use).
#
# Usage: bench/verdicts.sh [--runs N] [--history N] [--size BYTES] [--quick] [--binary PATH]
#                          [--max-processes N] [--strict] [--keep DIR | --from DIR]
#                          [-- RUN ARGS...]
#   --runs N       runs of A and of B (default 5: 10 pairs of A, 25 pairs of A and B)
#   --history N    first N runs of each, into the same database, not counted (default 0)
#   --size BYTES   B's read size (default 4096). Measured on the AMD EPYC VM (2026-12-07):
#                  4096 read 1.16-1.25x as long as size=1 in a quiet window; 1024
#                  1.01-1.19x (medians 1.05 call, 1.07 inline: a change of 5-7%); 64
#                  0.97-1.09x (medians 1.00 and 0.99: no cost to see)
#   --quick        oslab's --quick
#   --max-processes N  oslab's --max-processes, for A's runs and B's (default: oslab's, 6)
#   --binary PATH  the oslab to measure (default: cargo build --release)
#   --strict       exit 1 if a target is missed
#   --keep DIR     keep the databases (runs.db: A and B; known.db: B relabelled) in DIR, to
#                  look into a verdict afterwards (`oslab compare A B --db DIR/known.db`)
#   --from DIR     measure nothing: ask this oslab (--binary, or this checkout's) about the
#                  runs of a window kept with --keep (--runs as it was made with): a changed
#                  verdict rule tried on the same runs
#   -- RUN ARGS    A's experiments instead of the default:
#                  syscall.getppid syscall.read syscall.stat syscall.open_close
#                  ctxswitch.pipe --param placement=same pagefault.anon
#                  (they must include syscall.read at its default size=1)
#
# Exit status: 0 when everything ran, 1 when something failed to run (or a miss under
# --strict), 2 for a usage error.

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

RUNS=5
HISTORY=0
SIZE=4096
COMMON=()
BINARY=""
STRICT=0
KEEP=""
FROM=""
RUN_ARGS=(syscall.getppid syscall.read syscall.stat syscall.open_close
    ctxswitch.pipe --param placement=same pagefault.anon)
while (($#)); do
    case "$1" in
        --runs)
            [[ ${2:-} =~ ^[0-9]+$ ]] && (($2 >= 2)) || { echo "verdicts.sh: --runs takes a number >= 2" >&2; exit 2; }
            RUNS=$2
            shift 2
            ;;
        --history)
            [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "verdicts.sh: --history takes a number of runs" >&2; exit 2; }
            HISTORY=$2
            shift 2
            ;;
        --size)
            [[ ${2:-} =~ ^[0-9]+$ ]] && (($2 >= 2)) || { echo "verdicts.sh: --size takes a number of bytes >= 2" >&2; exit 2; }
            SIZE=$2
            shift 2
            ;;
        --quick) COMMON+=(--quick); shift ;;
        --max-processes)
            [[ ${2:-} =~ ^[0-9]+$ ]] && (($2 >= 1)) || { echo "verdicts.sh: --max-processes takes a number >= 1" >&2; exit 2; }
            COMMON+=(--max-processes "$2")
            shift 2
            ;;
        --binary)
            [[ -x ${2:-} ]] || { echo "verdicts.sh: --binary needs an executable oslab" >&2; exit 2; }
            BINARY=$2
            shift 2
            ;;
        --strict) STRICT=1; shift ;;
        --keep)
            [[ -n ${2:-} ]] || { echo "verdicts.sh: --keep needs a directory" >&2; exit 2; }
            KEEP=$2
            shift 2
            ;;
        --from)
            [[ -f ${2:-}/runs.db && -f ${2:-}/known.db ]] || { echo "verdicts.sh: --from needs a directory kept with --keep (runs.db, known.db)" >&2; exit 2; }
            FROM=$(cd "$2" && pwd)
            shift 2
            ;;
        --) shift; RUN_ARGS=("$@"); break ;;
        -h | --help) usage; exit 0 ;;
        *) echo "verdicts.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done

die() {
    echo "verdicts.sh: $*" >&2
    exit 1
}
command -v jq >/dev/null || die "jq is needed to read oslab's JSON (apt-get install jq)"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z $BINARY ]]; then
    (cd "$ROOT" && cargo build --release --quiet) || die "cargo build --release failed"
    BINARY=$ROOT/target/release/oslab
fi
OSLAB=$BINARY
if [[ -n $KEEP ]]; then
    mkdir -p "$KEEP" || die "cannot make $KEEP"
    [[ -z $(ls -A "$KEEP") ]] || die "$KEEP is not empty: --keep takes a new or empty directory"
    WORK=$(cd "$KEEP" && pwd)
else
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
fi
DB=${FROM:-$WORK}/runs.db
KNOWN_DB=${FROM:-$WORK}/known.db
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

run_id() { jq -r .run_id "$1"; }

if [[ -n $FROM ]]; then
    [[ -z $KEEP ]] || die "--from and --keep: one or the other"
    A=()
    B_UUID=()
    A_UUID=()
    for ((i = 1; i <= RUNS; i++)); do
        [[ -f $FROM/a$i.json && -f $FROM/relabelled-b$i.json ]] ||
            die "$FROM has no run $i of A and B (--runs as the window was made with)"
        A+=("$(run_id "$FROM/a$i.json")")
        A_UUID+=("$(jq -r .run.uuid "$FROM/export-a$i.json")")
        B_UUID+=("$(jq -r .run.uuid "$FROM/relabelled-b$i.json")")
    done
    echo "verdicts: the $RUNS runs of A and B kept in $FROM, asked anew"
    echo "binary $OSLAB"
else
    echo "verdicts: $RUNS runs (after $HISTORY of each not counted) of A: oslab run ${COMMON[*]} ${RUN_ARGS[*]}"
    echo "          $RUNS runs of B: oslab run ${COMMON[*]} syscall.read --param size=$SIZE (alternating)"
    echo "binary $OSLAB; kernel $(uname -r); $CPU_MODEL"
    for ((i = 1; i <= HISTORY; i++)); do
        oslab_to "$WORK/history-a$i.json" run "${COMMON[@]}" --json "${RUN_ARGS[@]}"
        oslab_to "$WORK/history-b$i.json" run "${COMMON[@]}" --json syscall.read --param "size=$SIZE"
        echo "  earlier runs $i of $HISTORY stored (not counted)"
    done
    A=()
    B=()
    for ((i = 1; i <= RUNS; i++)); do
        for side in a b; do
            before=$(idle_snapshot)
            start=$(date +%s.%N)
            if [[ $side == a ]]; then
                oslab_to "$WORK/a$i.json" run "${COMMON[@]}" --json "${RUN_ARGS[@]}"
                A+=("$(run_id "$WORK/a$i.json")")
            else
                oslab_to "$WORK/b$i.json" run "${COMMON[@]}" --json syscall.read --param "size=$SIZE"
                B+=("$(run_id "$WORK/b$i.json")")
            fi
            took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
            echo "  run $i $side: ${took} s; other CPUs $(busy_since "$before")% busy"
        done
    done

    # The known cost, where compare can pair it: A's runs as they are and B's with size=SIZE
    # renamed size=1 and a UUID of their own, in a database of their own.
    A_UUID=()
    B_UUID=()
    for ((i = 1; i <= RUNS; i++)); do
        oslab_to "$WORK/export-a$i.log" export "${A[i - 1]}" --format json -o "$WORK/export-a$i.json"
        oslab_to "$WORK/export-b$i.log" export "${B[i - 1]}" --format json -o "$WORK/export-b$i.json"
        A_UUID+=("$(jq -r .run.uuid "$WORK/export-a$i.json")")
        B_UUID+=("$(cat /proc/sys/kernel/random/uuid)")
        jq --arg size "$SIZE" --arg uuid "${B_UUID[i - 1]}" '.run.uuid = $uuid | .run.results |= map(
                if .experiment == "syscall.read" and .params.size == $size then .params.size = "1" else . end)' \
            "$WORK/export-b$i.json" >"$WORK/relabelled-b$i.json"
        DB=$KNOWN_DB oslab_to "$WORK/import-a$i.log" import "$WORK/export-a$i.json"
        DB=$KNOWN_DB oslab_to "$WORK/import-b$i.log" import "$WORK/relabelled-b$i.json"
    done
fi

# One line per configuration compared: the pair of runs, experiment, params, verdict, ratio,
# the change it could have seen, whether compare marked it † (its kernel canary moved as
# much, or a side took it wholly in a slow kernel phase: the host's doing on one kernel), and
# whether the spread of the earlier runs, not the two runs, set its CI's width.
verdicts() {
    jq -r --arg pair "$2" '.results[] | [$pair, .experiment,
        (.params | to_entries | map("\(.key)=\(.value)") | join(",")),
        (.verdict // "none"), (.ratio // "nan"), (.detectable_change // "nan"),
        (if .host_moved or ((.kernel_slower_than_earlier // []) | any(. != null))
         then "host" else "-" end),
        (if .ci_from_earlier_runs then "earlier" else "-" end)] | @tsv' "$1"
}
: >"$WORK/same.tsv"
for ((i = 0; i < RUNS; i++)); do
    for ((j = i + 1; j < RUNS; j++)); do
        oslab_to "$WORK/same-$i-$j.json" compare "${A[i]}" "${A[j]}" --json
        verdicts "$WORK/same-$i-$j.json" "A$((i + 1)) A$((j + 1))" >>"$WORK/same.tsv"
    done
done
: >"$WORK/known.tsv"
for ((i = 0; i < RUNS; i++)); do
    for ((j = 0; j < RUNS; j++)); do
        DB=$KNOWN_DB oslab_to "$WORK/known-$i-$j.json" compare "${A_UUID[i]}" "${B_UUID[j]}" --json
        verdicts "$WORK/known-$i-$j.json" "A$((i + 1)) B$((j + 1))" |
            awk -F'\t' '$2 == "syscall.read"' >>"$WORK/known.tsv"
    done
done

# The same runs compared as sets (`oslab compare A1,A2,… B1,B2,…`, each run's median one
# observation): A's runs against B's, and A's odd runs against its even ones. No target: what
# more runs buy where the runs' spread is the widest level.
commas() {
    local IFS=,
    echo "$*"
}
: >"$WORK/sets-known.tsv"
: >"$WORK/sets-same.tsv"
if ((RUNS >= 2)); then
    DB=$KNOWN_DB oslab_to "$WORK/sets-known.json" compare "$(commas "${A_UUID[@]}")" \
        "$(commas "${B_UUID[@]}")" --json
    verdicts "$WORK/sets-known.json" "A B" | awk -F'\t' '$2 == "syscall.read"' >"$WORK/sets-known.tsv"
fi
if ((RUNS >= 4)); then
    ODD=() EVEN=()
    for ((i = 0; i < RUNS; i++)); do
        if ((i % 2 == 0)); then ODD+=("${A[i]}"); else EVEN+=("${A[i]}"); fi
    done
    oslab_to "$WORK/sets-same.json" compare "$(commas "${ODD[@]}")" "$(commas "${EVEN[@]}")" --json
    verdicts "$WORK/sets-same.json" "odd even" >"$WORK/sets-same.tsv"
fi

python3 - "$STRICT" "$SIZE" "$WORK/same.tsv" "$WORK/known.tsv" "$WORK/sets-known.tsv" \
    "$WORK/sets-same.tsv" <<'PY'
import sys
from collections import defaultdict

strict, size = sys.argv[1] == "1", sys.argv[2]
def rows(path):
    out = []
    for line in open(path):
        pair, exp, params, verdict, ratio, could, host, floor = line.rstrip("\n").split("\t")
        out.append((pair, f"{exp} {params}".strip(), verdict, float(ratio), float(could),
                    host == "host", floor == "earlier"))
    return out

def median(xs):
    xs = sorted(x for x in xs if x == x)
    if not xs:
        return float("nan")
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2

def table(title, data, good, target):
    print()
    print(title)
    by = defaultdict(list)
    for pair, key, verdict, ratio, could, _, _ in data:
        by[key].append((verdict, ratio, could))
    print(f"  {'configuration':<44} {'pairs':>5} {'as expected':>11}  {'ratios':<15} {'could see (median)':>18}  other verdicts")
    hit = total = 0
    for key, vs in by.items():
        ok = sum(v in good for v, _, _ in vs)
        hit, total = hit + ok, total + len(vs)
        ratios = [r for _, r, _ in vs]
        others = sorted({v for v, _, _ in vs if v not in good})
        print(f"  {key:<44} {len(vs):>5} {ok:>5}/{len(vs):<5}  {min(ratios):.3f}–{max(ratios):.3f}   "
              f"{median([c for _, _, c in vs]) * 100:>16.1f}%  {', '.join(others)}")
    wrong = defaultdict(list)
    for pair, key, verdict, ratio, could, host, floor in data:
        if verdict not in good:
            mark = (" †" if host else "") + (" (CI from earlier runs)" if floor else "")
            wrong[pair].append(f"{key.split()[0]} {verdict} {ratio:.3f}{mark}")
    for pair, what in sorted(wrong.items()):
        print(f"    {pair}: {'; '.join(what)}")
    share = hit / total if total else 0.0
    verdict = "PASS" if share >= target else "MISS"
    print(f"  overall: {hit}/{total} = {share * 100:.1f}% (target >= {target * 100:.0f}%) {verdict}")
    marked = sum(1 for _, _, v, _, _, host, _ in data if v not in good and host)
    if marked:
        print(f"  of the {total - hit} not as expected, {marked} marked † by compare: the "
              "configuration's kernel canary moved as much, or a side took it wholly in a slow kernel "
              "phase (the host's doing on one kernel)")
    floored = sum(1 for _, _, v, _, _, host, f in data if v not in good and f and not host)
    if floored:
        print(f"  of the rest, {floored} had a CI that the spread of the earlier runs set, not the "
              "two runs (compare names those runs under its table)")
    return share >= target

ok_same = table("Same build, same experiments, every pair of A's runs: 'no change' or 'within noise'",
                rows(sys.argv[3]), {"no_change", "within_noise"}, 0.95)
ok_known = table(f"A known slowdown, A's syscall.read size=1 against B's size={size}: 'slower'",
                 rows(sys.argv[4]), {"slower"}, 0.95)
sets_known, sets_same = rows(sys.argv[5]), rows(sys.argv[6])
if sets_known or sets_same:
    print()
    print("The same runs as two sets (oslab compare A1,A2,… B1,B2,…), each run's median one "
          "observation; no target")
    for _, key, verdict, ratio, could, _, _ in sets_known:
        print(f"  A's runs against B's: {key:<36} {verdict:<12} {ratio:.3f}, could see {could * 100:.1f}%")
    if sets_same:
        same_ok = sum(v in {"no_change", "within_noise"} for _, _, v, _, _, _, _ in sets_same)
        print(f"  A's odd runs against its even ones: {same_ok}/{len(sets_same)} "
              "'no change' or 'within noise'")
if strict and not (ok_same and ok_known):
    sys.exit(1)
PY

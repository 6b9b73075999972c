#!/usr/bin/env bash
# bench/unixbench.sh — oslab's `--suite unixbench` beside UnixBench itself, test by test.
#
# A benchmark, not a test: it measures and reports. When byte-unixbench's source is at hand
# (UNIXBENCH_SRC, --src DIR, or ./byte-unixbench; the repository root or its UnixBench/
# folder), it copies it to a temporary directory, builds it there (make; needs cc, make and
# perl), and then, round after round, test by test and number of copies by number of copies,
# runs one of UnixBench's twelve index tests (e.g. `Run -c 1 -i I fsdisk`; then with N copies,
# N the online CPUs) and oslab's (`oslab run --suite unixbench fsdisk --json --copies 1
# --passes I`) one right after the other, the same timed passes (I of 10 s for the short
# loops, (I+1)/3 of 30 s or 60 s for the others), so that a phase of the host that lasts
# minutes falls on both tools of a figure (--halves: all of UnixBench's tests, then all of
# oslab's, as `Run` runs them in one go);
# the score is the geometric mean of the twelve indexes, as `Run` computes it. It prints per
# number of copies and test oslab's result and UnixBench's in UnixBench's unit (each the
# median over the rounds), the median of the rounds' own ratios oslab / UnixBench (a round's
# two figures were taken minutes apart: their ratio cancels what the host did in those
# minutes) with their range, and PASS within ±5 % (the score: ±3 %), MISS outside
# (docs/unixbench.md says why a test
# misses). Without the source it says how to get it and exits 0; it never downloads
# anything itself.
#
# Usage: bench/unixbench.sh [--src DIR] [--rounds R] [--iterations I] [--copies N] [--quick]
#                           [--binary OSLAB] [--strict] [--halves] [--only TESTS] [--keep DIR]
#                           [--rest SECONDS]
#        bench/unixbench.sh --from DIR [--from DIR...] [--strict]
#   --src DIR         byte-unixbench's source (default: $UNIXBENCH_SRC, else ./byte-unixbench)
#   --rounds R        UnixBench and oslab alternately, R times each (default 1); which goes
#                     first turns from one figure to the next, and from one round to the
#                     next (each figure's first tool swaps between rounds)
#   --iterations I    UnixBench's -i and oslab's --passes (default 1; UnixBench's own
#                     default is 10)
#   --copies N        the second number of copies (default: the online CPUs; 1: one copy only)
#   --quick           oslab's --quick (UnixBench has no such mode: its tests run 10–60 s each)
#   --binary OSLAB    the oslab to run (default: cargo build --release)
#   --strict          exit 1 if a target is missed
#   --halves          UnixBench's twelve tests in one `Run`, then oslab's in one `oslab run`
#   --only TESTS      some of the tests, comma-separated, by UnixBench's name or oslab's
#                     experiment (`fsdisk,spawn`; `unixbench.shell`: shell1 and shell8);
#                     no score then
#   --keep DIR        keep every round's reports in DIR (created; its reports are replaced),
#                     with the machine and the settings in DIR/machine.txt
#   --rest SECONDS    idle this long before each tool's test (default 0), so that neither
#                     tool's pass comes right after the other's: UnixBench's shell1 pass right
#                     after oslab's 8-script pass made 0.91-0.96 of its pass after a minute
#                     idle, and the ratio of the two tools followed (docs/unixbench.md); a
#                     round has 48 such starts with 2 copies (24 with --copies 1)
#   --from DIR        run nothing: summarize the rounds kept in DIR (by --keep); repeat it to
#                     pool the rounds of several runs of the script on one machine (the
#                     `rounds` column says how many each test has; where tests have more
#                     rounds than the score, a last row gives the score's ratio as the
#                     geometric mean of the twelve tests' median ratios)
#
# Besides the median ratio's PASS/MISS, each figure gets the 90% interval of the ratio from
# the rounds' own ratios (geometric mean, Student's t on their logarithms) and the verdict of
# two one-sided tests at 5% against the target (TOST): `within` when the interval lies inside
# ±5 % (±3 % for the score), `outside` when it lies wholly outside, else `open`, with the
# rounds that would decide at the spread measured. Two rounds decide only a ratio whose two
# rounds agree closely: t(0.95, 1) = 6.31.
#
# UnixBench takes about six minutes per number of copies with -i 1 (its file copies sync and
# sleep, its shell tests run a minute each), and so does oslab. Neither is pinned; other load on the machine
# spoils both (the busy share of the CPUs is printed). Exit status: 0 when everything ran
# (PASS or MISS) or the source is absent, 1 when something failed to run (or a MISS under
# --strict), 2 for a usage error.

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

SRC=
ITERATIONS=1
ROUNDS=1
COPIES=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)
QUICK=()
BINARY=
STRICT=0
HALVES=0
ONLY=
KEEP=
REST=0
FROM=()
while (($#)); do
    case $1 in
        --src) SRC=${2:?--src needs a directory}; shift 2 ;;
        --iterations)
            [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "unixbench.sh: --iterations needs a whole number" >&2; exit 2; }
            ITERATIONS=$2
            shift 2
            ;;
        --rounds)
            [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "unixbench.sh: --rounds needs a whole number" >&2; exit 2; }
            ROUNDS=$2
            shift 2
            ;;
        --copies)
            [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "unixbench.sh: --copies needs a whole number" >&2; exit 2; }
            COPIES=$2
            shift 2
            ;;
        --quick) QUICK=(--quick); shift ;;
        --binary)
            [[ -x ${2:-} ]] || { echo "unixbench.sh: --binary needs an executable oslab" >&2; exit 2; }
            BINARY=$2
            shift 2
            ;;
        --strict) STRICT=1; shift ;;
        --halves) HALVES=1; shift ;;
        --only) ONLY=,${2:?--only needs test names},; shift 2 ;;
        --keep) KEEP=${2:?--keep needs a directory}; shift 2 ;;
        --rest)
            [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "unixbench.sh: --rest needs whole seconds" >&2; exit 2; }
            REST=$2
            shift 2
            ;;
        --from)
            [[ -d ${2:-} ]] || { echo "unixbench.sh: --from needs a directory that --keep wrote" >&2; exit 2; }
            FROM+=("$2")
            shift 2
            ;;
        -h | --help) usage; exit 0 ;;
        *) echo "unixbench.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done

# Summarize the rounds kept in the directories $2...: one table per number of copies. $1: 1 to
# exit 1 when a figure misses its target.
summarize() {
    python3 - "$@" <<'PY'
import glob, json, math, re, statistics, sys

strict, dirs = sys.argv[1] == "1", sys.argv[2:]

# t(0.95, df) for the 90% interval of two one-sided tests at 5%.
T95 = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 7: 1.895, 8: 1.860, 9: 1.833,
       10: 1.812, 12: 1.782, 15: 1.753, 20: 1.725, 30: 1.697, 60: 1.671, 120: 1.658}
def t95(df):
    return T95[max(k for k in T95 if k <= df)] if df < 1000 else 1.645

def equivalence(ratios, target):
    """(interval, verdict) of the ratio from the rounds' ratios: the geometric mean's 90%
    interval (t on the logarithms), `within`/`outside` the target by TOST, or `open` with the
    rounds that would decide if the spread stayed as measured."""
    n = len(ratios)
    if n < 2:
        return "", ""
    logs = [math.log(r) for r in ratios]
    mean, sd = statistics.mean(logs), statistics.stdev(logs)
    half = t95(n - 1) * sd / math.sqrt(n)
    lo, hi, edge = math.exp(mean - half), math.exp(mean + half), math.log(1 + target)
    interval = f"{lo:.3f}–{hi:.3f}"
    if mean + half <= edge and mean - half >= -edge:
        return interval, "within"
    if mean - half > edge or mean + half < -edge:
        return interval, "outside"
    room = abs(abs(mean) - edge)
    need = next((k for k in range(n + 1, 201) if t95(k - 1) * sd / math.sqrt(k) < room), None)
    return interval, f"open (~{need} rounds)" if need else "open (at the edge)"

def geometric(indexes):
    return math.exp(sum(math.log(i) for i in indexes) / len(indexes)) if indexes and all(i > 0 for i in indexes) else None

def merged(paths, read):
    """One round's tables from its reports (one per test, or one for all): the tests'
    figures, and the score as `Run` computes it, the geometric mean of the twelve indexes."""
    tables = {}
    for path in paths:
        for copies, table in read(path).items():
            tables.setdefault(copies, {}).update(table)
    for table in tables.values():
        indexes = [index for _, index in table.values()]
        table["score"] = (geometric(indexes) if len(indexes) == 12 else None, None)
    return tables

def unixbench(path):
    """{copies: {label: (result, index)}} from one UnixBench report."""
    text, tables = open(path).read(), {}
    # Each number of copies: "Benchmark Run: ... N CPUs in system; running M parallel
    # cop(y|ies) of tests", then its table of index values.
    for part in re.split(r"(?=running \d+ parallel cop)", text)[1:]:
        copies = int(re.match(r"running (\d+)", part).group(1))
        # A run of all twelve has "Index Values", one of some "Partial Index".
        block = re.split(r"System Benchmarks (?:Index Values|Partial Index)", part, maxsplit=1)
        if len(block) < 2:
            continue
        table = tables.setdefault(copies, {})
        for line in block[1].splitlines()[1:]:
            m = re.match(r"^(\S.*?)\s{2,}([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", line)
            if m:
                table[m.group(1).strip()] = (float(m.group(3)), float(m.group(4)))
            elif line.startswith("System Benchmarks Index Score"):
                break
    return tables

ORDER = ["Dhrystone 2 using register variables", "Double-Precision Whetstone", "Execl Throughput",
         "File Copy 1024 bufsize 2000 maxblocks", "File Copy 256 bufsize 500 maxblocks",
         "File Copy 4096 bufsize 8000 maxblocks", "Pipe Throughput", "Pipe-based Context Switching",
         "Process Creation", "Shell Scripts (1 concurrent)", "Shell Scripts (8 concurrent)",
         "System Call Overhead"]
units = {}
def oslab(path):
    tables = {}
    for g in json.load(open(path)).get("unixbench") or []:
        table = tables.setdefault(g["copies"], {})
        for t in g["tests"]:
            table[t["test"]] = (t["value"], t["index"])
            units[t["test"]] = (t["unit"], t["status"])
    return tables

# Every round of every directory: its number is the first field after the tool's name.
kept = [(d, r) for d in dirs for r in sorted({int(p.split("/")[-1].split(".")[1])
                                               for p in glob.glob(f"{d}/unixbench.*.txt")})]
ub_rounds = [merged(sorted(glob.glob(f"{d}/unixbench.{r}.*.txt")), unixbench) for d, r in kept]
os_rounds = [merged(sorted(glob.glob(f"{d}/oslab.{r}.*.json")), oslab) for d, r in kept]
rounds = len(kept)
if not rounds or not os_rounds[0]:
    sys.exit("unixbench.sh: no rounds to summarize in " + ", ".join(dirs))
units["score"] = ("", "")
missed = checked = 0
decided = {}
for copies in sorted(os_rounds[0]):
    # In the order of UnixBench's own report.
    labels = sorted((k for k in os_rounds[0][copies] if k != "score"),
                    key=lambda k: (ORDER.index(k) if k in ORDER else len(ORDER), k)) + ["score"]
    rows = [("test", "unit", "oslab", "UnixBench", "oslab/UB", "rounds", "rounds' ratios", "status",
             "", "90% interval", "equivalence")]
    medians, test_rounds = [], []
    for label in labels:
        ours = [t[copies][label][0] for t in os_rounds if copies in t and label in t[copies] and t[copies][label][0]]
        theirs = [t[copies][label][0] for t in ub_rounds if copies in t and label in t[copies] and t[copies][label][0]]
        unit, status = units.get(label, ("", ""))
        mine = statistics.median(ours) if ours else None
        ub = statistics.median(theirs) if theirs else None
        # The rounds' own ratios: a test's two tools ran minutes apart in one round, so a
        # round's ratio cancels the host's phase of those minutes; their median is the verdict's.
        pairs = [o[copies][label][0] / u[copies][label][0] for o, u in zip(os_rounds, ub_rounds)
                 if all(copies in t and label in t[copies] and t[copies][label][0] for t in (o, u))]
        ratio = statistics.median(pairs) if pairs else None
        spread = f"{min(pairs):.3f}–{max(pairs):.3f}" if len(pairs) > 1 else ""
        target = 0.03 if label == "score" else 0.05
        verdict = "" if ratio is None else ("PASS" if abs(ratio - 1) <= target else "MISS")
        checked += verdict != ""
        missed += verdict == "MISS"
        interval, equivalent = equivalence(pairs, target)
        decided[equivalent.split(" ")[0]] = decided.get(equivalent.split(" ")[0], 0) + 1
        name = "System Benchmarks Index Score" if label == "score" else label
        if label == "score":
            score_rounds = len(pairs)
        elif ratio is not None:
            medians.append(ratio)
            test_rounds.append(len(pairs))
        rows.append((name, unit, "–" if mine is None else f"{mine:.1f}", "–" if ub is None else f"{ub:.1f}",
                     "–" if ratio is None else f"{ratio:.3f}", str(len(pairs)), spread, status, verdict,
                     interval, equivalent))
    # Rounds that ran some tests only have no score of their own; the score's ratio is also the
    # geometric mean of the twelve tests' ratios (UnixBench's baselines cancel), so the tests'
    # median ratios give one over every round kept.
    if len(medians) == 12 and max(test_rounds) > score_rounds:
        pooled = geometric(medians)
        verdict = "PASS" if abs(pooled - 1) <= 0.03 else "MISS"
        checked += 1
        missed += verdict == "MISS"
        rows.append(("Index Score from the tests' ratios", "", "", "", f"{pooled:.3f}", "", "", "",
                     verdict, "", ""))
    print(f"{copies} {'copy' if copies == 1 else 'copies'} ({rounds} round{'s' if rounds > 1 else ''} kept; "
          f"each figure the median of its test's rounds)")
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) if i in (0, 1, 7, 8, 10) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    print()
print(f"{missed} of {checked} figures outside their target (tests ±5 %, score ±3 %; docs/unixbench.md says why)")
if rounds > 1:
    print("equivalence over the rounds (90% interval, TOST): " +
          ", ".join(f"{decided.get(k, 0)} {k}" for k in ("within", "outside", "open")))
sys.exit(1 if strict and missed else 0)
PY
}

die() {
    echo "unixbench.sh: $*" >&2
    exit 1
}

if ((${#FROM[@]})); then
    summarize "$STRICT" "${FROM[@]}"
    exit
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPT=unixbench.sh
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
# shellcheck source=bench/unixbench_src.sh
source "$ROOT/bench/unixbench_src.sh"
unixbench_prepare

echo "UnixBench from $SRC, built in $WORK; oslab $("$OSLAB" --version 2>/dev/null | head -n1)"
echo "$(uname -sr), $CPU_MODEL, CPUs online $ONLINE"
if [[ -n $KEEP ]]; then
    mkdir -p "$KEEP" || die "--keep: cannot create $KEEP"
    rm -f "$KEEP"/unixbench.*.txt "$KEEP"/oslab.*.json
    {
        date -u '+%Y-%m-%d %H:%M UTC'
        echo "$(uname -sr), $CPU_MODEL, CPUs online $ONLINE"
        "$OSLAB" --version 2>/dev/null | head -n1
        echo "rounds $ROUNDS, iterations $ITERATIONS, copies $COPIES, halves $HALVES, only ${ONLY:-all}, rest ${REST}s"
    } >"$KEEP/machine.txt"
fi
unixbench_build "$WORK"

TESTS=(dhry2reg whetstone-double execl fstime fsbuffer fsdisk pipe context1 spawn shell1 shell8 syscall)
COPY_COUNTS=(1)
((COPIES > 1)) && COPY_COUNTS+=("$COPIES")
# UnixBench's tests and the oslab experiment that measures each (File Copy's three and Shell
# Scripts' two are one experiment's configurations; `oslab run --suite unixbench fsdisk`
# picks one, as `./Run fsdisk` does).
TEST_GROUPS=("dhry2reg:unixbench.dhrystone" "whetstone-double:unixbench.whetstone"
    "execl:unixbench.execl" "fstime fsbuffer fsdisk:unixbench.file_copy" "pipe:unixbench.pipe"
    "context1:unixbench.context1" "spawn:unixbench.spawn" "shell1 shell8:unixbench.shell"
    "syscall:unixbench.syscall")
# --rest: idle before a tool's test, and say so, so that the line naming the tool means it runs.
rest() {
    ((REST)) || return 0
    echo "  (idle ${REST}s first: --rest)" >&2
    sleep "$REST"
}
# UnixBench's pass of tests $3 (UnixBench's names) with copies $4 (comma-separated) in round
# $1, tagged $2: the CPUs' busy share on stdout.
run_unixbench() {
    local round=$1 tag=$2 ub_tests=$3 copies=() n before
    for n in ${4//,/ }; do copies+=(-c "$n"); done
    rest
    # shellcheck disable=SC2086  # the test names split on purpose
    echo "Round $round of $ROUNDS: UnixBench (Run ${copies[*]} -i $ITERATIONS $ub_tests) ..." >&2
    before=$(idle_snapshot)
    # shellcheck disable=SC2086
    (cd "$WORK/UnixBench" && ./Run "${copies[@]}" -i "$ITERATIONS" $ub_tests) >"$WORK/unixbench.$round.$tag.txt" 2>"$WORK/unixbench.err" ||
        { tail -n 20 "$WORK/unixbench.err" >&2; die "UnixBench's Run failed"; }
    busy_since "$before"
}
# oslab's pass of the same tests (UnixBench's names or an experiment; none: all) with the same
# copies: the busy share on stdout.
run_oslab() {
    local round=$1 tag=$2 tests=$3 copies=$4 before
    rest
    echo "Round $round of $ROUNDS: oslab (run --suite unixbench $tests --copies $copies --passes $ITERATIONS ${QUICK[*]}) ..." >&2
    before=$(idle_snapshot)
    # shellcheck disable=SC2086
    oslab_to "$WORK/oslab.$round.$tag.json" run --suite unixbench $tests --copies "$copies" --passes "$ITERATIONS" --json "${QUICK[@]}" >&2
    busy_since "$before"
}
# One figure (or, with --halves, all) of round R, tagged T: tests $3, copies $4; UnixBench
# first when $5 is odd, oslab first when it is even. Turning the order from one figure to
# the next and from one round to the next, a host that drifts the same way through minutes
# (this VM's did by 15% in ten) favours neither tool.
run_both() {
    local round=$1 tag=$2 tests=$3 copies=$4 turn=$5 ub_busy oslab_busy
    if ((turn % 2)); then
        ub_busy=$(run_unixbench "$round" "$tag" "$tests" "$copies")
        oslab_busy=$(run_oslab "$round" "$tag" "$tests" "$copies")
    else
        oslab_busy=$(run_oslab "$round" "$tag" "$tests" "$copies")
        ub_busy=$(run_unixbench "$round" "$tag" "$tests" "$copies")
    fi
    echo "round $round, $tag: other CPUs busy ${ub_busy}% during UnixBench, ${oslab_busy}% during oslab; other oslab processes now: $(foreign_oslab)"
    if [[ -n $KEEP ]]; then
        cp "$WORK/unixbench.$round.$tag.txt" "$WORK/oslab.$round.$tag.json" "$KEEP/"
    fi
}
# The tests --only names, UnixBench's names, space-separated: each test it names, and each of
# an experiment's it names; all without --only.
chosen_tests() {
    local group test out=()
    for group in "${TEST_GROUPS[@]}"; do
        for test in ${group%%:*}; do
            if [[ -z $ONLY || $ONLY == *",$test,"* || $ONLY == *",${group##*:},"* ]]; then
                out+=("$test")
            fi
        done
    done
    echo "${out[*]}"
}
if [[ -n $ONLY ]]; then
    ((HALVES)) && { echo "unixbench.sh: --only runs test by test; drop --halves" >&2; exit 2; }
    for name in ${ONLY//,/ }; do
        found=0
        for group in "${TEST_GROUPS[@]}"; do
            [[ " ${group%%:*} ${group##*:} " == *" $name "* ]] && found=1
        done
        ((found)) || { echo "unixbench.sh: --only: no test '$name' (UnixBench's: ${TESTS[*]}; or oslab's unixbench.*)" >&2; exit 2; }
    done
fi
all_copies=$(IFS=,; echo "${COPY_COUNTS[*]}")
for round in $(seq 1 "$ROUNDS"); do
    if ((HALVES)); then
        # oslab's own name for all its tests is none: its suite.
        run_both "$round" all "${TESTS[*]}" "$all_copies" "$round"
        continue
    fi
    turn=$round
    for test in $(chosen_tests); do
        for copies in "${COPY_COUNTS[@]}"; do
            run_both "$round" "$test.c$copies" "$test" "$copies" "$turn"
            turn=$((turn + 1))
        done
    done
done
echo

summarize "$STRICT" "$WORK"

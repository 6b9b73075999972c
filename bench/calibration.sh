#!/usr/bin/env bash
# bench/calibration.sh — does a result's interval cover what the next run gives?
#
# A benchmark, not a test: it measures and reports. It runs the same experiments in N
# separate `oslab run`s (each a fresh oslab, so fresh workers, layouts and caches) and prints,
# per configuration:
#   spread     max/min − 1 of the N runs' medians: how far a rerun moves the figure
#   coverage   how often one run's 95% interval (where a rerun's median falls: the
#              confidence interval times √2, floored by the earlier runs' spread once the
#              database holds two of them, by the machine's spread over the run's
#              configurations with one; docs/measurement.md) covers another run's median,
#              over all ordered pairs of runs (N·(N−1) pairs per configuration); also apart
#              for the runs whose intervals rest on earlier runs and those that do not, and
#              without the configuration runs that said the host was in a slow phase through
#              them (`kernel_slower_than_earlier`: what the interval does not claim to cover)
#   drift      per run, how far all its configurations sat from the other runs at once (the
#              machine's or host's state during that run, which no interval computed within
#              a run can see), and the coverage among the runs that drifted less than 1%
# Targets (issue "Numbers you can bet on"): coverage >= 90% overall, spread <= 2% for the
# syscall, ctxswitch (same CPU) and pagefault families, on a quiet machine.
#
# Usage: bench/calibration.sh [--runs N] [--history N] [--quick] [--binary PATH] [--strict]
#                               [--keep DIR | --from DIR] [-- RUN ARGS...]
#   --runs N       separate runs (default 5)
#   --history N    first make N runs of the same, into the same database, that are not counted:
#                  the earlier runs a user's database holds (default 0: a fresh database, where
#                  the third run on has enough)
#   --quick        oslab's --quick (a smoke run)
#   --binary PATH  measure another oslab build (e.g. an older one, for a before/after); an
#                  oslab without the pooled `configurations` of its JSON is read through its
#                  per-process `results` (one process per configuration)
#   --strict       exit 1 if a target is missed
#   --first K      also score the same runs as if every configuration had stopped at its first
#                  K processes (each run exported, the later processes dropped, imported into a
#                  second database and shown): what the processes added after K
#                  (--max-processes) bought, on the same runs and the same machine state
#   --lmbench      after each oslab run, run lmbench's counterparts as lmbench runs them by
#                  default, pinned to the CPU oslab takes (lat_syscall null, read, stat FILE,
#                  open FILE; lat_ctx -s 0 2), and print beside oslab's figures the machine's
#                  own spread between those runs (issue 34's targets: oslab's spread no wider
#                  than lmbench's; a median half-width no wider than 1.5 times lmbench's
#                  spread; a quiet window is one where lmbench's spreads are all within 3%).
#                  About four minutes a run: lmbench's programs take 40-55 s each here
#   --lmbench-src DIR  lmbench's source when it cannot be cloned (a tree or a bare git repository)
#   --file PATH    the file lmbench's stat and open use (default /etc/passwd)
#   --keep DIR     keep the window: its database, each run's JSON and lmbench's figures in DIR
#   --from DIR     measure nothing: score a window kept with --keep, each run shown anew from
#                  its database by the oslab given (--binary, or this checkout's): a changed
#                  interval rule tried on the same runs (--runs, --history, --first, --quick,
#                  --lmbench and RUN ARGS do not apply)
#   -- RUN ARGS    what each run measures instead of the default:
#                  syscall.getppid syscall.read syscall.stat syscall.open_close
#                  ctxswitch.pipe --param placement=same pagefault.anon
#
# Exit status: 0 when everything ran, 1 when something failed to run (or a miss under
# --strict), 2 for a usage error.

set -euo pipefail

usage() {
    sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

RUNS=5
HISTORY=0
QUICK=()
BINARY=""
STRICT=0
FIRST=0
LMBENCH=0
LMBENCH_SRC=${LMBENCH_SRC:-}
FILE=/etc/passwd
KEEP=""
FROM=""
RUN_ARGS=(syscall.getppid syscall.read syscall.stat syscall.open_close
    ctxswitch.pipe --param placement=same pagefault.anon)
while (($#)); do
    case "$1" in
        --runs)
            [[ ${2:-} =~ ^[0-9]+$ ]] && (($2 >= 2)) || { echo "calibration.sh: --runs takes a number >= 2" >&2; exit 2; }
            RUNS=$2
            shift 2
            ;;
        --history)
            [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "calibration.sh: --history takes a number of runs" >&2; exit 2; }
            HISTORY=$2
            shift 2
            ;;
        --quick) QUICK=(--quick); shift ;;
        --binary)
            [[ -x ${2:-} ]] || { echo "calibration.sh: --binary needs an executable oslab" >&2; exit 2; }
            BINARY=$2
            shift 2
            ;;
        --strict) STRICT=1; shift ;;
        --first)
            [[ ${2:-} =~ ^[0-9]+$ ]] && (($2 >= 1)) || { echo "calibration.sh: --first takes a number of processes >= 1" >&2; exit 2; }
            FIRST=$2
            shift 2
            ;;
        --lmbench) LMBENCH=1; shift ;;
        --lmbench-src)
            [[ -e ${2:-} ]] || { echo "calibration.sh: --lmbench-src needs lmbench's source directory" >&2; exit 2; }
            LMBENCH_SRC=$2
            shift 2
            ;;
        --file)
            [[ -r ${2:-} ]] || { echo "calibration.sh: --file needs a readable file" >&2; exit 2; }
            FILE=$2
            shift 2
            ;;
        --keep)
            [[ -n ${2:-} && ! -f ${2:-} ]] || { echo "calibration.sh: --keep needs a directory to write" >&2; exit 2; }
            KEEP=$2
            shift 2
            ;;
        --from)
            [[ -f ${2:-}/calibration.db && -f ${2:-}/run1.json ]] ||
                { echo "calibration.sh: --from needs a directory that --keep wrote (calibration.db, run1.json, ...)" >&2; exit 2; }
            FROM=$2
            shift 2
            ;;
        --) shift; RUN_ARGS=("$@"); break ;;
        -h | --help) usage; exit 0 ;;
        *) echo "calibration.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done

die() {
    echo "calibration.sh: $*" >&2
    exit 1
}
command -v python3 >/dev/null || die "python3 is needed to read oslab's JSON"
# The run id in an `oslab run --json` document.
run_id_of() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$1"
}
[[ -n $KEEP && -n $FROM ]] && { echo "calibration.sh: --keep and --from do not go together" >&2; exit 2; }
# A kept window (--from) measures nothing: its runs are shown anew at the end.
[[ -n $FROM ]] && { RUNS=0; HISTORY=0; FIRST=0; LMBENCH=0; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
oslab_prepare calibration

# lmbench's counterparts of the default experiments, run as lmbench runs them by default and
# pinned where oslab runs: "EXPERIMENT<TAB>ns" per line of $WORK/lmbench/RUN.tsv.
if ((LMBENCH)); then
    command -v taskset >/dev/null || die "--lmbench needs taskset"
    # shellcheck source=bench/lmbench.sh
    source "$ROOT/bench/lmbench.sh"
    lmbench_build lat_syscall lat_ctx || die "--lmbench: $LMBENCH_WHY"
    mkdir -p "$WORK/lmbench"
fi
# lat_syscall prints "Simple syscall: 0.1234 microseconds", lat_ctx "2 1.85" (µs), on stderr.
lmbench_run() {
    local out=$WORK/lmbench/$1.tsv spec experiment ns
    : >"$out"
    for spec in "syscall.getppid lat_syscall null" "syscall.read lat_syscall read" \
        "syscall.stat lat_syscall stat $FILE" "syscall.open_close lat_syscall open $FILE" \
        "ctxswitch.pipe lat_ctx -s 0 2"; do
        read -r experiment program args <<<"$spec"
        # shellcheck disable=SC2086  # args is several words
        ns=$(taskset -c "$CPU" "$LMBENCH_BIN/$program" $args 2>&1 |
            awk '/microseconds/ { v = $(NF-1) } $1 == "2" && NF == 2 { v = $2 } END { if (v == "") exit 1; printf "%.1f\n", v * 1000 }') ||
            die "lmbench $program $args printed no figure"
        printf '%s\t%s\n' "$experiment" "$ns" >>"$out"
    done
}

if [[ -z $FROM ]]; then
    echo "calibration: $RUNS runs (after $HISTORY not counted) of: oslab run ${QUICK[*]} ${RUN_ARGS[*]}"
    echo "binary $OSLAB; kernel $(uname -r); $CPU_MODEL"
fi
for ((i = 1; i <= HISTORY; i++)); do
    oslab_to "$WORK/history$i.json" run "${QUICK[@]}" --json "${RUN_ARGS[@]}"
    echo "  earlier run $i of $HISTORY stored (not counted)"
done
for ((i = 1; i <= RUNS; i++)); do
    before=$(idle_snapshot)
    others=$(foreign_oslab)
    start=$(date +%s.%N)
    oslab_to "$WORK/run$i.json" run "${QUICK[@]}" --json "${RUN_ARGS[@]}"
    took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "  run $i: ${took} s; other CPUs $(busy_since "$before")% busy; other oslab processes before: $others"
    # What the run said of a host slower to enter the kernel than in the earlier runs.
    slow=$(tr -s '\n ' ' ' <"$WORK/run$i.json.err" | grep -o 'Entering the kernel took [^(]*' || true)
    [[ -n $slow ]] && echo "    the run said: ${slow% }"
    if ((LMBENCH)); then
        lmbench_run "$i"
        echo "  lmbench after run $i: $(cut -f2 "$WORK/lmbench/$i.tsv" | paste -sd' ') ns (getppid read stat open ctx)"
    fi
done

# The same runs with only each configuration's first $FIRST processes (--first): exported,
# trimmed, imported into a database of their own and shown as oslab pools them.
if ((FIRST > 0)); then
    command -v jq >/dev/null || die "jq is needed for --first"
    for ((i = 1; i <= RUNS; i++)); do
        id=$(run_id_of "$WORK/run$i.json")
        oslab_to "$WORK/export$i.log" export "$id" --format json -o "$WORK/export$i.json"
        jq --argjson k "$FIRST" '.run.results |= (reduce .[] as $r ({out: [], n: {}};
                ($r | [.experiment, .params, .label] | tojson) as $key
                | if (.n[$key] // 0) < $k then .out += [$r] | .n[$key] = ((.n[$key] // 0) + 1)
                  else . end) | .out)' "$WORK/export$i.json" >"$WORK/trim$i.json"
        DB=$WORK/first.db oslab_to "$WORK/first$i.import" import "$WORK/trim$i.json"
        DB=$WORK/first.db oslab_to "$WORK/first$i.json" show --json "$i"
    done
fi

analyse() {
python3 - "$STRICT" "$@" <<'PY'
import json, sys

strict = sys.argv[1] == "1"
docs = [json.load(open(p)) for p in sys.argv[2:]]

def configurations(doc):
    """(key, median, ci_low, ci_high, processes, floor, slow) per configuration, pooled as
    oslab shows it; floor: what its interval rests on besides its own run, "runs" (its earlier
    runs' spread: `between_runs` in the JSON; an oslab older than that field floored from four
    earlier runs on), "machine" (`machine_floor`: the machine's spread over the run's
    configurations, where it has one earlier run) or None; slow: whether the run says its
    kernel entry was 1.2x the earlier runs' (`kernel_slower_than_earlier`: a whole run in a
    slow phase of the host, which the interval does not claim to cover)."""
    if "configurations" in doc:
        rows = doc["configurations"]
    else:  # an older oslab: one process per configuration
        rows = [dict(r, processes=1) for r in doc["results"]]
    out = {}
    for r in rows:
        key = r["experiment"] + "".join(
            f" {k}={v}" for k, v in sorted(r["params"].items()) if k in ("placement", "memory", "thp", "entry"))
        if r.get("median") is None:
            continue
        floored = (r["between_runs"] is not None if "between_runs" in r
                   else len(r.get("earlier_medians", [])) >= 4)
        floored = "runs" if floored else "machine" if r.get("machine_floor") else None
        slow = r.get("kernel_slower_than_earlier") is not None
        out[key] = (r["median"], r["ci_low"], r["ci_high"], r.get("processes", 1), floored, slow)
    return out

runs = [configurations(d) for d in docs]
keys = [k for k in runs[0] if all(k in r for r in runs)]
TARGET_COVERAGE, TARGET_SPREAD = 0.90, 0.02
families = ("syscall.", "ctxswitch.", "pagefault.")
def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2

def covered_pairs(k, among, holders=None):
    """(covered, pairs) of configuration k over the ordered pairs of distinct runs in
    `among`: how often run i's 95% interval holds run j's median (i only in `holders`, when
    given)."""
    c = p = 0
    for i in among:
        if holders is not None and i not in holders:
            continue
        for j in among:
            if i == j:
                continue
            lo, hi = runs[i][k][1], runs[i][k][2]
            p += 1
            c += lo is not None and hi is not None and lo <= runs[j][k][0] <= hi
    return c, p

print()
print(f"{'configuration':<36} {'processes':>9} {'medians (ns)':<44} {'spread':>7} {'coverage':>9}  verdict")
covered = pairs = 0
misses = []
all_halves = []
spread_of, halves_of = {}, {}  # per configuration, for the targets below
worst = (0.0, "")
for k in keys:
    meds = [r[k][0] for r in runs]
    spread = max(meds) / min(meds) - 1 if min(meds) > 0 else float("inf")
    c, p = covered_pairs(k, range(len(runs)))
    covered += c
    pairs += p
    halves = [(r[k][2] - r[k][1]) / 2 / r[k][0] for r in runs if r[k][1] is not None]
    half = median(halves) if halves else float("nan")
    all_halves.extend(halves)
    spread_of[k], halves_of[k] = spread, halves
    worst = max(worst, (spread, k))
    ok_spread = spread <= TARGET_SPREAD or not k.startswith(families)
    verdict = "ok" if ok_spread else "MISS spread"
    if not ok_spread:
        misses.append(f"{k}: spread {spread*100:.1f}%")
    shown = " ".join(f"{m:.4g}" for m in meds)
    print(f"{k:<36} {runs[0][k][3]:>9} {shown:<44} {spread*100:>6.2f}% {c:>4}/{p:<4}  {verdict} (interval ±{half*100:.2f}%, median of runs)")
coverage = covered / pairs if pairs else 0.0
print()
if all_halves:
    print(f"median half-width: ±{median(all_halves)*100:.1f}% over {len(all_halves)} intervals; "
          f"worst spread between runs: {worst[0]*100:.1f}% ({worst[1]})")
print(f"coverage overall: {covered}/{pairs} = {coverage*100:.1f}% (target >= {TARGET_COVERAGE*100:.0f}%)"
      f" {'PASS' if coverage >= TARGET_COVERAGE else 'MISS'}")
# Apart: the pairs in which neither run said the host was in a slow phase through the
# configuration (`run`'s note): the reruns at the host's usual level the interval claims.
told = sum(r[k][5] for r in runs for k in keys)
if told:
    c = p = 0
    for k in keys:
        usual = [i for i in range(len(runs)) if not runs[i][k][5]]
        ck, pk = covered_pairs(k, usual)
        c, p = c + ck, p + pk
    print(f"  {told} configuration runs said the host was slower to enter the kernel than in "
          f"the earlier runs; coverage without them: {c}/{p} = {c / p * 100 if p else 0:.1f}%")
# Apart: the intervals floored by the earlier runs' spread (from two of them on), by the
# machine's spread (one earlier run), and the rest.
for name, floored in (("floored by earlier runs", "runs"), ("floored by the machine's spread", "machine"),
                      ("resting on their own run", None)):
    c = p = 0
    for k in keys:
        holders = {i for i, r in enumerate(runs) if r[k][4] == floored}
        ck, pk = covered_pairs(k, range(len(runs)), holders)
        c, p = c + ck, p + pk
    if p:
        print(f"  intervals {name}: {c}/{p} = {c / p * 100:.1f}%")

# Whole-run drift: how far each run sat from the others over all its configurations at once
# (the median over configurations of its median over the configuration's median of runs).
# A shift shared by every configuration of one run is the machine's (the host's) state during
# that run: no interval computed inside a run can see it, since all of the run's processes
# share it. Coverage without such runs says what is left.
drift = []
for i, ri in enumerate(runs):
    ratios = [ri[k][0] / median([r[k][0] for r in runs]) for k in keys if ri[k][0] > 0]
    drift.append(median(ratios) - 1 if ratios else 0.0)
print("whole-run drift (median over configurations of run / median of runs − 1): "
      + ", ".join(f"run {i + 1} {d*100:+.1f}%" for i, d in enumerate(drift)))
# The same for the two canaries (docs/measurement.md §5): the kernel canary, a null call
# timed after every sample, and the CPU canary, a fixed pure-CPU loop. A run whose
# configurations all moved while its kernel canary moved alike ran while the host made
# entering the kernel dearer or cheaper; the CPU canary says whether user-mode work moved too.
def canaries(doc, field):
    out = {}
    for r in doc.get("configurations", []):
        value = (r.get("host") or {}).get(field)
        if value:
            out[r["experiment"] + json.dumps(r["params"], sort_keys=True)] = value
    return out
for field, what in (("kernel_canary_median_ns", "kernel canary's drift (the same, of the null call timed after every sample)"),
                    ("canary_median_ns", "CPU canary's drift (the same, of the multiply chain timed after every sample)")):
    values = [canaries(d, field) for d in docs]
    common = [k for k in values[0] if all(k in v for v in values)]
    if common:
        cdrift = [median([v[k] / median([vv[k] for vv in values]) for k in common]) - 1 for v in values]
        print(f"{what}: " + ", ".join(f"run {i + 1} {d*100:+.1f}%" for i, d in enumerate(cdrift)))
# The runs' medians with and without the samples taken in a slow kernel phase
# (host.kernel_phase: the kernel canary 1.2x its configuration's fast level or more). Where
# they came in phases (left_out) oslab's median already leaves them out, and the one with them
# is the median moved back by median_shift; where they stay in (scattered), the one without
# is the median moved by it. Says how far apart the runs sit either way.
def phase_medians(doc):
    out = {}
    for r in doc.get("configurations", []):
        phase = (r.get("host") or {}).get("kernel_phase")
        if r.get("median") and phase:
            moved = 1 + (phase.get("median_shift") or 0.0)
            m = r["median"]
            key = r["experiment"] + json.dumps(r["params"], sort_keys=True)
            out[key] = (m / moved, m, True) if phase.get("left_out") else (m, m * moved, False)
    return out
phased = [phase_medians(d) for d in docs]
common = [k for k in phased[0] if all(k in s for s in phased)]
if common:
    def spreads(j):
        return sorted((max(s[k][j] for s in phased) / min(s[k][j] for s in phased) - 1, k)
                      for k in common)
    raw, kept = spreads(0), spreads(1)
    left = sum(s[k][2] for s in phased for k in common)
    print(f"slow kernel phases: left out in {left} of {len(common) * len(phased)} configuration runs; "
          f"spread between runs without their samples {median([s for s, _ in kept])*100:.1f}% "
          f"(with them {median([s for s, _ in raw])*100:.1f}%) over {len(common)} configurations; "
          f"worst without {kept[-1][0]*100:.1f}% ({kept[-1][1]})")
DRIFT = 0.01
steady = [i for i, d in enumerate(drift) if abs(d) < DRIFT]
if len(steady) < len(runs) and len(steady) >= 2:
    c, p = map(sum, zip(*(covered_pairs(k, steady) for k in keys)))
    print(f"coverage among the runs that drifted less than {DRIFT*100:.0f}% as a whole "
          f"({', '.join(str(i + 1) for i in steady)}): {c}/{p} = {c / p * 100:.1f}%")
print(f"spread <= {TARGET_SPREAD*100:.0f}% (syscall, ctxswitch, pagefault): "
      f"{'PASS' if not misses else 'MISS: ' + '; '.join(misses)}")

# Issue 34's absolute targets on the median half-width of each configuration's intervals.
def half_target(k):
    return 0.10 if k.startswith("fs.") else 0.05
wide = []
for k in keys:
    if halves_of[k] and median(halves_of[k]) > half_target(k):
        wide.append(f"{k} ±{median(halves_of[k])*100:.1f}%")
print(f"median half-width <= 5% (<= 10% for fs.*): "
      f"{'PASS' if not wide else 'MISS: ' + '; '.join(wide)}")

# The machine's own spread: lmbench's counterparts, run after each oslab run (--lmbench).
import glob, os
lm = {}
for path in sorted(glob.glob(os.path.join(os.environ.get("LMBENCH_DIR", "/nonexistent"), "*.tsv")),
                   key=lambda p: int(os.path.basename(p).split(".")[0])):
    for line in open(path):
        experiment, ns = line.split()
        lm.setdefault(experiment, []).append(float(ns))
lm_misses = []
if lm:
    print()
    print("Beside lmbench, run after each oslab run on the same CPU (spread = max/min - 1 of the runs):")
    print(f"  {'experiment':<20} {'lmbench (ns)':<40} {'lmbench':>8} {'oslab':>8} {'oslab ±':>8}  "
          "oslab's spread no wider; half-width <= 1.5 x lmbench's spread")
    quiet = True
    for experiment, values in lm.items():
        ks = [k for k in keys if k.split()[0] == experiment]
        if not ks or len(values) < 2:
            continue
        ls = max(values) / min(values) - 1
        quiet &= ls <= 0.03
        os_ = max(spread_of[k] for k in ks)
        oh = median([h for k in ks for h in halves_of[k]])
        v1, v2 = os_ <= ls, oh <= 1.5 * ls
        if not (v1 and v2):
            lm_misses.append(experiment)
        shown = " ".join(f"{v:.5g}" for v in values)
        print(f"  {experiment:<20} {shown:<40} {ls*100:7.1f}% {os_*100:7.1f}% {oh*100:7.1f}%  "
              f"{'yes' if v1 else 'no'}; {'yes' if v2 else 'no'}")
    print(f"  a quiet window (every lmbench spread within 3%): {'yes' if quiet else 'no'}; "
          f"oslab's spread is its widest configuration's, its half-width the median over them")
if strict and (misses or wide or lm_misses or coverage < TARGET_COVERAGE):
    sys.exit(1)
PY
}

# A kept window (--from): each run shown anew from its database, lmbench's figures as kept.
if [[ -n $FROM ]]; then
    DB=$FROM/calibration.db
    echo "calibration: the window kept in $FROM, each run shown by $OSLAB"
    for kept in "$FROM"/run[0-9]*.json; do
        id=$(run_id_of "$kept")
        oslab_to "$WORK/$(basename "$kept")" show --json "$id"
    done
    LMBENCH_DIR=$FROM/lmbench analyse "$WORK"/run*.json
    exit
fi
if [[ -n $KEEP ]]; then
    mkdir -p "$KEEP" || die "--keep: cannot make $KEEP"
    cp "$DB" "$WORK"/run[0-9]*.json "$WORK"/run[0-9]*.json.err "$KEEP/"
    [[ -d $WORK/lmbench ]] && cp -r "$WORK/lmbench" "$KEEP/"
    echo "kept in $KEEP: bench/calibration.sh --from $KEEP scores it again"
fi
LMBENCH_DIR=$WORK/lmbench analyse "$WORK"/run*.json
if ((FIRST > 0)); then
    echo
    echo "The same runs, each configuration's first $FIRST processes only:"
    analyse "$WORK"/first[0-9]*.json
fi

#!/usr/bin/env bash
# bench/claims-soak.sh — how often each experiment's claims fail on this machine.
#
# A soak, not a test: it runs every experiment of the default, filemicro and unixbench suites
# N times with --quick (`oslab run --quick --json`, `oslab run --suite filemicro --quick
# --json`, `oslab run --suite unixbench --quick --json`, one after the other, N rounds) and
# prints, per configuration, in how many runs a process was `suspect` (a claim failed) or
# `failed`, with the first reason seen. The goal on an idle machine is 0 suspects in 10 runs:
# a configuration above 0 either has a claim to fix or a tolerance to justify with a measured
# distribution (docs/measurement.md, "Claims that hold").
#
# Usage: bench/claims-soak.sh [--runs N] [--suites LIST] [--binary OSLAB] [--dir DIR]
#   --runs N          rounds (default 10)
#   --suites LIST     comma-separated, of default, filemicro, unixbench (default: all three)
#   --binary OSLAB    the oslab to run (default: cargo build --release)
#   --dir DIR         where file experiments make their files (default: a temporary
#                     directory under $TMPDIR, on /tmp's file system)
#
# One round takes about as long as the three suites with --quick (measured here: see the
# figures in docs/measurement.md); each run's wall clock and how busy the other CPUs were
# are printed as it goes. Exit status: 0 when every run ran (suspect or not), 1 when a run
# failed to run at all, 2 for a usage error.

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

RUNS=10
SUITES=default,filemicro,unixbench
BINARY=
DIR=
while (($#)); do
    case $1 in
        --runs)
            [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "claims-soak.sh: --runs needs a whole number above 0" >&2; exit 2; }
            RUNS=$2
            shift 2
            ;;
        --suites)
            [[ ${2:-} =~ ^(default|filemicro|unixbench)(,(default|filemicro|unixbench))*$ ]] ||
                { echo "claims-soak.sh: --suites takes default, filemicro, unixbench, comma-separated" >&2; exit 2; }
            SUITES=$2
            shift 2
            ;;
        --binary)
            [[ -x ${2:-} ]] || { echo "claims-soak.sh: --binary needs an executable oslab" >&2; exit 2; }
            BINARY=$2
            shift 2
            ;;
        --dir)
            [[ -d ${2:-} ]] || { echo "claims-soak.sh: --dir needs an existing directory" >&2; exit 2; }
            DIR=$2
            shift 2
            ;;
        -h | --help) usage; exit 0 ;;
        *) echo "claims-soak.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done

die() {
    echo "claims-soak.sh: $*" >&2
    exit 1
}
command -v python3 >/dev/null || die "python3 is needed to read the runs' JSON"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
oslab_prepare soak
[[ -n $DIR ]] || DIR=$WORK

echo "oslab $("$OSLAB" --version 2>/dev/null | head -n1); $(uname -sr), $CPU_MODEL, CPUs online $ONLINE"
echo "$RUNS round(s) of: ${SUITES//,/, } (--quick); files in $DIR"
IFS=, read -r -a suites <<<"$SUITES"
for ((round = 1; round <= RUNS; round++)); do
    for suite in "${suites[@]}"; do
        args=(run --quick --json --dir "$DIR")
        [[ $suite == default ]] || args+=(--suite "$suite")
        out=$WORK/$suite.$round.json
        before=$(idle_snapshot)
        others=$(foreign_oslab)
        start=$SECONDS
        rc=0
        "$OSLAB" --db "$DB" "${args[@]}" >"$out" 2>"$out.err" || rc=$?
        case $rc in
            0 | 3 | 4) ;; # 3: a result failed, 4: one was suspect; still runs whose JSON is read
            *) tail -n 5 "$out.err" >&2; die "oslab ${args[*]} exited with $rc" ;;
        esac
        [[ -s $out ]] || { tail -n 5 "$out.err" >&2; die "oslab ${args[*]} wrote no JSON (exit $rc)"; }
        echo "round $round $suite: exit $rc, $((SECONDS - start)) s, other CPUs busy $(busy_since "$before")%, other oslab processes $others"
    done
done
echo

python3 - "$WORK" "$RUNS" "$SUITES" <<'PY'
import glob, json, os, sys

work, runs, suites = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
rows = {}
for suite in suites:
    for path in sorted(glob.glob(os.path.join(work, f"{suite}.*.json"))):
        doc = json.load(open(path))
        seen = {}
        for r in doc["results"]:
            label = r.get("label") or ",".join(f"{k}={v}" for k, v in sorted(r["params"].items()))
            key = (suite, r["experiment"], label)
            worst = seen.setdefault(key, {"suspect": None, "failed": None})
            if r["status"] in ("suspect", "failed") and worst[r["status"]] is None:
                worst[r["status"]] = r.get("reason") or ""
        for key, worst in seen.items():
            row = rows.setdefault(key, {"runs": 0, "suspect": 0, "failed": 0, "reason": ""})
            row["runs"] += 1
            for status in ("suspect", "failed"):
                if worst[status] is not None:
                    row[status] += 1
                    row["reason"] = row["reason"] or f"{status}: {worst[status]}"
print(f"{'suite':<10} {'experiment':<28} {'configuration':<34} {'runs':>4} {'suspect':>7} {'failed':>6}")
bad = 0
for (suite, name, label), row in sorted(rows.items()):
    print(f"{suite:<10} {name:<28} {label[:34]:<34} {row['runs']:>4} {row['suspect']:>7} {row['failed']:>6}")
    if row["reason"]:
        bad += 1
        print(f"{'':<10}   first: {row['reason'][:200]}")
total = sum(r["runs"] for r in rows.values())
suspect = sum(r["suspect"] for r in rows.values())
failed = sum(r["failed"] for r in rows.values())
print(f"\n{len(rows)} configurations, {total} configuration runs: {suspect} with a suspect process "
      f"({100 * suspect / max(total, 1):.2f}%), {failed} with a failed one; "
      f"{bad} configuration(s) above 0")
PY

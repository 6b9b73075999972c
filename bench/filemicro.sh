#!/usr/bin/env bash
# bench/filemicro.sh — oslab's `--suite filemicro` beside Filebench itself, personality by
# personality, on one file system.
#
# A benchmark, not a test: it measures and reports. It needs Filebench 1.5: its source
# (FILEBENCH_SRC or --src DIR, a clone of github.com/filebench/filebench; oslab does not ship
# it), which it copies to a temporary directory and builds there as Filebench's README says
# (libtoolize, aclocal, autoheader, automake, autoconf, configure, make: needs cc, make,
# autoconf, automake, libtool, flex and bison, installed with apt-get when missing and run as
# root), or a built `filebench` binary and its `workloads/` folder. Round after round it runs each personality's
# workload file under Filebench (its defaults, but $dir and one thread: `set $nthreads=1`,
# since oslab measures one thread; `set mode quit firstdone` and `run SECONDS` appended, so
# a personality that ends on a count reports its figures; the `cached` attribute, which
# Filebench 1.5 no longer parses, taken out; under `setarch -R`, which Filebench's shared
# memory needs on a kernel that randomises addresses) and then `oslab run
# filemicro.<personality> --dir DIR --json` (with cached=true where the personality reads:
# Filebench 1.5 reads the file it has just laid out, from the page cache). It prints per personality
# Filebench's IO Summary ops/s, how long Filebench's run took, oslab's ops/s counted as
# Filebench counts them (docs/filemicro.md), their ratio, and PASS within ±10 %, MISS outside
# (docs/filemicro.md says why a personality misses). Filebench's figure is its IO Summary when
# the run lasted its time; a personality that ends sooner, on a count or a byte total, gets its
# I/O flowops' ops over the time they took (the Per-Operation Breakdown, without the
# finishoncount and opslimit lines, which count ops the IO Summary leaves out), since the IO
# Summary divides by whole seconds of Filebench's polling. rread and rwrite, which would end after a
# tenth of a second, run their time instead ($bytes raised). Without Filebench it says how to get it
# and exits 0.
#
# Usage: bench/filemicro.sh [--src DIR | --filebench PATH] [--workloads DIR] [--dir DIR]
#                           [--seconds S] [--rounds R] [--only LIST] [--quick] [--binary OSLAB]
#                           [--strict]
#   --src DIR         Filebench's source, built before the rounds (default: $FILEBENCH_SRC)
#   --filebench PATH  the filebench binary (default: $FILEBENCH, else `filebench` on PATH)
#   --workloads DIR   its workload files (default: $FILEBENCH_WORKLOADS, else workloads/ beside
#                     the binary, else /usr/local/share/filebench/workloads)
#   --dir DIR         the file system under test (default: a new directory in /var/tmp)
#   --seconds S       Filebench's `run S` (default 60, its own default); a personality that
#                     finishes on a count or a byte total ends sooner
#   --rounds R        Filebench and oslab alternately, R times each (default 1; medians)
#   --only LIST       comma-separated personalities (e.g. statfile,openfiles; default all)
#   --quick           oslab's --quick, and its smaller sizes given to Filebench too
#   --binary OSLAB    the oslab to run (default: cargo build --release)
#   --strict          exit 1 if a personality misses its target
#
# Exit status: 0 when everything ran (PASS or MISS) or Filebench is absent, 1 when something
# failed to run (or a MISS under --strict), 2 for a usage error.

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

FB=${FILEBENCH:-}
SRC=${FILEBENCH_SRC:-}
WORKLOADS=${FILEBENCH_WORKLOADS:-}
DIR=
SECONDS_RUN=60
ROUNDS=1
ONLY=
QUICK=()
BINARY=
STRICT=0
number() { [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "filemicro.sh: $1 needs a whole number" >&2; exit 2; }; }
while (($#)); do
    case $1 in
        --filebench) FB=${2:?--filebench needs a path}; shift 2 ;;
        --src) SRC=${2:?--src needs a directory}; shift 2 ;;
        --workloads) WORKLOADS=${2:?--workloads needs a directory}; shift 2 ;;
        --dir) DIR=${2:?--dir needs a directory}; shift 2 ;;
        --seconds) number "$1" "${2:-}"; SECONDS_RUN=$2; shift 2 ;;
        --rounds) number "$1" "${2:-}"; ROUNDS=$2; shift 2 ;;
        --only) ONLY=${2:?--only needs a list}; shift 2 ;;
        --quick) QUICK=(--quick); shift ;;
        --binary)
            [[ -x ${2:-} ]] || { echo "filemicro.sh: --binary needs an executable oslab" >&2; exit 2; }
            BINARY=$2
            shift 2
            ;;
        --strict) STRICT=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "filemicro.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done

die() {
    echo "filemicro.sh: $*" >&2
    exit 1
}

# Filebench built from its source in a directory of its own, removed on exit; its binary and
# workloads/ then sit side by side, as the lookup below expects.
BUILD=
build_filebench() {
    [[ -f $SRC/configure.ac && -f $SRC/parser_gram.y ]] ||
        die "--src $SRC is not Filebench's source (no configure.ac and parser_gram.y there)"
    local missing=() tool
    for tool in cc make autoconf automake libtoolize flex bison; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    if ((${#missing[@]})); then
        ((EUID == 0)) && command -v apt-get >/dev/null ||
            die "Filebench's build needs ${missing[*]} (Debian: apt-get install gcc make autoconf automake libtool flex bison)"
        echo "filemicro.sh: installing Filebench's build tools (${missing[*]})" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc make autoconf automake libtool \
            flex bison >/dev/null || die "apt-get install of Filebench's build tools failed"
    fi
    BUILD=$(mktemp -d "${TMPDIR:-/tmp}/oslab-filebench.XXXXXX")
    trap 'rm -rf "$BUILD"' EXIT
    cp -r "$SRC/." "$BUILD/"
    echo "filemicro.sh: building Filebench from $SRC in $BUILD" >&2
    (cd "$BUILD" && libtoolize && aclocal && autoheader && automake --add-missing && autoconf &&
        ./configure && make -j"$(nproc)") >"$BUILD/build.log" 2>&1 ||
        { tail -n 20 "$BUILD/build.log" >&2; die "Filebench's build failed (the end of its log is above)"; }
    FB=$BUILD/filebench
}
[[ -n $SRC ]] && build_filebench
[[ -z $FB ]] && FB=$(command -v filebench || true)
if [[ -z $FB || ! -x $FB ]]; then
    cat <<'HOW'
filemicro.sh: no Filebench here, so there is nothing to compare with.
  Clone Filebench 1.5's source (CDDL-licensed; oslab does not ship it) and point to it; the
  script builds it (it needs autoconf, automake, libtool, flex and bison):
    git clone https://github.com/filebench/filebench
    FILEBENCH_SRC=filebench bench/filemicro.sh
  or put a built `filebench` on PATH or point to it:
    FILEBENCH=/path/to/filebench bench/filemicro.sh
  oslab's own figures need no Filebench: oslab run --suite filemicro --dir DIR
HOW
    exit 0
fi
if [[ -z $WORKLOADS ]]; then
    for w in "$(dirname "$FB")/workloads" /usr/local/share/filebench/workloads; do
        [[ -f $w/filemicro_seqread.f ]] && { WORKLOADS=$w; break; }
    done
fi
[[ -n $WORKLOADS && -f $WORKLOADS/filemicro_seqread.f ]] ||
    die "Filebench's workloads/ folder is not beside $FB: pass --workloads DIR"
for tool in setarch python3; do
    command -v "$tool" >/dev/null || die "$tool is needed (setarch: util-linux; python3: reading the figures)"
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
oslab_prepare filemicro
# The scratch directory's trap, widened to the file system's directory and Filebench's build.
if [[ -z $DIR ]]; then
    DIR=$(mktemp -d /var/tmp/oslab-filemicro.XXXXXX)
    trap 'rm -rf "$WORK" "$DIR" ${BUILD:+"$BUILD"}' EXIT
else
    [[ -d $DIR && -w $DIR ]] || die "--dir $DIR is not a writable directory"
    trap 'rm -rf "$WORK" ${BUILD:+"$BUILD"}' EXIT
fi

# The personalities and, for --quick, the sizes oslab shrinks (name=value per experiment).
"$OSLAB" list --json >"$WORK/list.json" || die "oslab list --json failed"
python3 - "$WORK/list.json" "$ONLY" "${#QUICK[@]}" >"$WORK/plan" <<'PY'
import json, sys
experiments, only, quick = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3] == "1"
wanted = {w.strip() for w in only.split(",") if w.strip()}
names = [e["name"] for e in experiments if e["name"].startswith("filemicro.")]
unknown = wanted - {n.split(".", 1)[1] for n in names}
if unknown:
    print(f"filemicro.sh: no personality {', '.join(sorted(unknown))} (oslab list filemicro)", file=sys.stderr)
    sys.exit(2)
for e in experiments:
    short = e["name"].split(".", 1)[1] if e["name"].startswith("filemicro.") else None
    if short and (not wanted or short in wanted):
        sets = [f"{p['name']}={p['quick']}" for p in e["params"] if quick and p["quick"]]
        # Filebench 1.5 has no `cached` any more (its workload files still set it): its reads
        # find the file it has just laid out in the page cache, so oslab's must too.
        sets += ["cached=true" for p in e["params"] if p["name"] == "cached"]
        print(" ".join([e["name"]] + sets))
PY
mapfile -t PLAN <"$WORK/plan"
((${#PLAN[@]})) || die "oslab lists no filemicro personality on this system"

# A personality's workload file for Filebench: $dir, one thread, the sizes, `run`.
workload() {
    local experiment=$1 file assign value
    shift
    file=${experiment#filemicro.}
    [[ $file == openfiles ]] || file=filemicro_$file
    [[ -f $WORKLOADS/$file.f ]] || die "no $WORKLOADS/$file.f for $experiment"
    # Filebench 1.5 refuses the `cached` attribute its own filemicro files still give.
    local sed_args=(-e "s|^set \\\$dir=.*|set \$dir=$DIR|" -e 's|^set \$nthreads=.*|set $nthreads=1|'
        -e 's|,cached=\$cached||')
    for assign in "$@"; do
        [[ $assign == cached=* ]] && continue
        # Filebench's size suffixes are lower case (64m, not 64M).
        value=${assign#*=}
        sed_args+=(-e "s|^set \\\$${assign%%=*}=.*|set \$${assign%%=*}=${value,,}|")
    done
    # rread and rwrite stop after $bytes (128 MiB: a tenth of a second of 2 KiB ops here),
    # too short for Filebench's whole-second clock; the total does not change what an op does.
    case $experiment in
        filemicro.rread | filemicro.rwrite) sed_args+=(-e 's|^set \$bytes=.*|set $bytes=1099511627776|') ;;
    esac
    sed "${sed_args[@]}" "$WORKLOADS/$file.f"
    # A finishoncount or finishonbytes flowop ends the run; in Filebench's default mode that
    # is an error ("Run stopped early") and it prints no statistics.
    echo "set mode quit firstdone"
    echo "run $SECONDS_RUN"
}

echo "Filebench $FB ($("$FB" -h 2>&1 | grep -m1 -o 'version [^ ]*' || echo 'version unknown')), workloads $WORKLOADS"
echo "oslab $("$OSLAB" --version 2>/dev/null | head -n1); file system under test: $DIR ($(df -T "$DIR" | awk 'NR == 2 { print $2 " on " $1 }'))"
echo "$(uname -sr), $CPU_MODEL, CPUs online $ONLINE"
experiments=()
for line in "${PLAN[@]}"; do
    read -r -a fields <<<"$line"
    experiments+=("${fields[0]}")
done
for round in $(seq 1 "$ROUNDS"); do
    before=$(idle_snapshot)
    for line in "${PLAN[@]}"; do
        read -r -a fields <<<"$line"
        echo "Round $round of $ROUNDS: Filebench ${fields[0]#filemicro.} (run $SECONDS_RUN) ..." >&2
        out=$WORK/fb.$round.${fields[0]}
        workload "${fields[@]}" >"$out.f"
        # Each tool starts with nothing dirty: the last one's gigabyte still being written
        # back would throttle this one's writes (seqwrite moved 15x between runs without it).
        sync
        setarch -R "$FB" -f "$out.f" >"$out.txt" 2>&1 || true
        grep -q "IO Summary:" "$out.txt" ||
            echo "  Filebench printed no IO Summary for ${fields[0]}: $(grep -m1 -E 'WARNING|rror' "$out.txt" || tail -n1 "$out.txt")" >&2
        find "$DIR" -mindepth 1 -delete
    done
    fb_busy=$(busy_since "$before")
    before=$(idle_snapshot)
    for line in "${PLAN[@]}"; do
        read -r -a fields <<<"$line"
        params=()
        for assign in "${fields[@]:1}"; do params+=(--param "$assign"); done
        echo "Round $round of $ROUNDS: oslab run ${fields[*]} ${QUICK[*]} ..." >&2
        sync
        oslab_to "$WORK/oslab.$round.${fields[0]}.json" run "${fields[0]}" "${params[@]}" --dir "$DIR" --json "${QUICK[@]}"
    done
    echo "round $round: other CPUs busy ${fb_busy}% during Filebench, $(busy_since "$before")% during oslab; other oslab processes now: $(foreign_oslab)"
done
echo

python3 - "$WORK" "$ROUNDS" "$STRICT" "$SECONDS_RUN" "${experiments[@]}" <<'PY'
import json, re, statistics, sys

work, rounds, strict, run_seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4])
experiments = sys.argv[5:]

# Flowops that are not I/O (Filebench's FLOW_TYPE_OTHER and FLOW_TYPE_SYNC): they pass
# through flowop_beginop/endop too, so its Per-Operation Breakdown gives each an op count (a
# finishoncount after every write doubles the ops there), but its IO Summary leaves them out.
NOT_IO = {"block", "wakeup", "semblock", "sempost", "hog", "delay", "eventlimit", "bwlimit",
          "iopslimit", "opslimit", "finishoncount", "finishonbytes", "print", "testrandvar"}

def filebench(path):
    """(ops/s or None, how it was read, seconds the run took) from Filebench's output.

    A run that lasted its `run` time: the IO Summary's ops/s. One that finished sooner (a
    count or a byte total reached): Filebench's IO Summary divides by whole seconds of its
    one-second polling, idle ones included, so the rate is the I/O flowops' ops over the time
    they took (its Per-Operation Breakdown: ops × ms/op, summed over the I/O flowops named in
    the workload file; their ops must add up to the IO Summary's). Filebench prints ms/op to
    three decimals; "latency ±P%" says how far that rounding can move the rate."""
    text = open(path).read()
    ops = re.search(r"IO Summary:\s+(\d+) ops ([\d.]+) ops/s", text)
    took = re.search(r"Run took (\d+) seconds", text)
    seconds = int(took.group(1)) if took else None
    if not ops:
        return None, "", "?" if seconds is None else str(seconds)
    if seconds is not None and seconds >= run_seconds:
        return float(ops.group(2)), "summary", str(seconds)
    workload = open(path[: -len(".txt")] + ".f").read()
    kinds = dict((m.group(2), m.group(1)) for m in re.finditer(r"flowop\s+(\w+)\s+name=([\w-]+)", workload))
    count = busy_ms = rounding_ms = 0.0
    for m in re.finditer(r"^(\S+)\s+(\d+)ops\s+\d+ops/s\s+[\d.]+mb/s\s+([\d.]+)ms/op", text, re.M):
        if kinds.get(m.group(1)) in NOT_IO:
            continue
        count += int(m.group(2))
        busy_ms += int(m.group(2)) * float(m.group(3))
        rounding_ms += int(m.group(2)) * 0.0005
    if count != int(ops.group(1)):
        sys.exit(f"filemicro.sh: {path}: the I/O flowops' ops ({count:.0f}) are not the IO Summary's "
                 f"({ops.group(1)}); a flowop kind is missing from NOT_IO")
    if busy_ms <= 0:
        return float(ops.group(2)), "summary", str(seconds)
    return count / busy_ms * 1000, f"latency ±{100 * rounding_ms / busy_ms:.1f}%", str(seconds)

def oslab(round):
    found = {}
    for e in experiments:
        for l in json.load(open(f"{work}/oslab.{round}.{e}.json")).get("filemicro") or []:
            found[l["experiment"]] = l
    return found

ours = [oslab(r) for r in range(1, rounds + 1)]
rows = [("personality", "Filebench ops/s", "from", "run (s)", "oslab ops/s", "oslab/Filebench", "oslab status", "")]
missed = checked = 0
for e in experiments:
    theirs = [filebench(f"{work}/fb.{r}.{e}.txt") for r in range(1, rounds + 1)]
    figures = [t[0] for t in theirs if t[0]]
    fb = statistics.median(figures) if figures else None
    how = "/".join(sorted({t[1] for t in theirs if t[1]}))
    took = "/".join(t[2] for t in theirs)
    mine = [o[e]["ops_per_s"] for o in ours if e in o and o[e]["ops_per_s"]]
    status = "/".join(sorted({o[e]["status"] for o in ours if e in o})) or "absent"
    me = statistics.median(mine) if mine else None
    ratio = me / fb if me and fb else None
    verdict = "" if ratio is None else ("PASS" if abs(ratio - 1) <= 0.10 else "MISS")
    checked += verdict != ""
    missed += verdict == "MISS"
    name = e.split(".", 1)[1]
    rows.append((name if name == "openfiles" else f"filemicro_{name}", "–" if fb is None else f"{fb:.1f}", how, took,
                 "–" if me is None else f"{me:.1f}", "–" if ratio is None else f"{ratio:.3f}", status, verdict))
print(f"Filebench's IO Summary beside oslab, one thread each (median of {rounds} round{'s' if rounds > 1 else ''})")
widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
for r in rows:
    print("  ".join(c.ljust(w) if i in (0, 2, 6, 7) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
print("from: summary = Filebench's IO Summary (the run lasted its time); latency = its I/O flowops' ops over")
print("the time they took (the run ended sooner, and the IO Summary counts whole seconds of its polling);")
print("±P% = how far Filebench's ms/op, printed to three decimals, can move that rate")
print(f"\n{missed} of {checked} personalities outside ±10 % (docs/filemicro.md says why)")
sys.exit(1 if strict and missed else 0)
PY

# shellcheck shell=bash
# bench/lib.sh — helpers shared by the benchmark scripts; sourced, not run.
#
# The sourcing script sets OSLAB (the binary) and DB (a throw-away database), or has
# oslab_prepare set them, and defines die MESSAGE; sourcing sets ONLINE, CPU (where everything
# is pinned: the CPU `oslab run` takes by default) and CPU_MODEL, and defines:
#   oslab_prepare NAME       OSLAB: $BINARY (--binary), else this checkout's release build
#                            (cargo build --release in $ROOT); WORK: a scratch directory
#                            oslab-NAME.XXXXXX, removed on exit; DB: $WORK/NAME.db
#   idle_snapshot            "TOTAL IDLE" jiffies summed over the CPUs other than $CPU
#   busy_since SNAPSHOT      percent of that time the other CPUs were busy since SNAPSHOT
#   foreign_oslab            how many oslab processes run now (a script's own never runs then)
#   oslab_to FILE ARGS...    oslab ARGS with $DB, stdout to FILE and stderr to FILE.err: exit 0
#                            is a result, 4 a result flagged suspect (still a measurement: a
#                            warning is printed), anything else means it did not run (die)

# The CPU `oslab run` pins to without --cpu (src/cli/run/cpus.rs): the one with the fewest
# device interrupts since boot (the numbered lines of /proc/interrupts), the highest-numbered
# of equals; nothing where the file is absent. (oslab also keeps to the fastest kind of core
# and to its affinity; the scripts run on machines of one kind, unconfined.)
quietest_cpu() {
    awk 'NR == 1 { for (i = 1; i <= NF; i++) { c = $i; sub("CPU", "", c); col[i] = c } n = NF; next }
        $1 ~ /^[0-9]+:$/ { for (i = 1; i <= n && $(i + 1) ~ /^[0-9]+$/; i++) sum[col[i]] += $(i + 1) }
        END { for (i = 1; i <= n; i++) if (best == "" || sum[col[i]] <= sum[best]) best = col[i]; print best }' \
        /proc/interrupts 2>/dev/null || true
}

# /sys/.../online looks like "0-1" or "0,2-5".
ONLINE=$(cat /sys/devices/system/cpu/online)
CPU=$(quietest_cpu)
[[ $CPU =~ ^[0-9]+$ ]] || CPU=${ONLINE##*[,-]}
# shellcheck disable=SC2034  # used by the sourcing scripts
CPU_MODEL=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)

oslab_prepare() {
    if [[ -z ${BINARY:-} ]]; then
        (cd "$ROOT" && cargo build --release --quiet) || die "cargo build --release failed"
        BINARY=$ROOT/target/release/oslab
    fi
    OSLAB=$BINARY
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/oslab-$1.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
    DB=$WORK/$1.db
}

idle_snapshot() {
    awk -v pinned="cpu$CPU" '/^cpu[0-9]/ && $1 != pinned {
        for (i = 2; i <= 9; i++) total += $i; idle += $5 + $6 } END { print total, idle }' /proc/stat
}

busy_since() {
    local total0 idle0 total1 idle1
    read -r total0 idle0 <<<"$1"
    read -r total1 idle1 <<<"$(idle_snapshot)"
    awk -v t="$((total1 - total0))" -v i="$((idle1 - idle0))" 'BEGIN { printf "%.0f\n", (t > 0 ? 100 * (1 - i / t) : 0) }'
}

foreign_oslab() {
    if command -v pgrep >/dev/null; then pgrep -cx oslab || true; else echo "?"; fi
}

oslab_to() {
    local out=$1 rc=0
    shift
    "$OSLAB" --db "$DB" "$@" >"$out" 2>"$out.err" || rc=$?
    case $rc in
        0) ;;
        4) echo "  (warning: oslab flagged a result as suspect: $(grep -m1 -i suspect "$out.err" || true))" >&2 ;;
        *) tail -n 5 "$out.err" >&2; die "oslab $* exited with $rc" ;;
    esac
}

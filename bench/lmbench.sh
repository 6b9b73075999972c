# shellcheck shell=bash
# bench/lmbench.sh — lmbench's programs for the benchmark scripts; sourced, not run.
#
# The sourcing script sets WORK (a scratch directory) and LMBENCH_SRC (a source tree or a bare
# git repository of github.com/intel/lmbench, or empty to clone it); sourcing defines:
#   lmbench_build PROGRAM...   build lmbench's PROGRAMs (lat_syscall, lat_ctx, ...) into
#                              $LMBENCH_BIN, a cache (${XDG_CACHE_HOME:-~/.cache}/oslab-bench),
#                              fetching the source first; 1 with the reason in LMBENCH_WHY
# It needs cc and Debian's libtirpc-dev (installed with apt-get when missing and run as root).

LMBENCH_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/oslab-bench/lmbench"
LMBENCH_BIN="$LMBENCH_CACHE/bin"
LMBENCH_WHY=""

lmbench_fetch() {
    local src="$LMBENCH_CACHE/src"
    [[ -f "$src/src/lat_syscall.c" ]] && return 0
    rm -rf "$src" && mkdir -p "$src"
    if [[ -n "${LMBENCH_SRC:-}" && -f "$LMBENCH_SRC/src/lat_syscall.c" ]]; then
        cp -r "$LMBENCH_SRC/." "$src/"
    elif [[ -n "${LMBENCH_SRC:-}" ]] && git --git-dir="$LMBENCH_SRC" rev-parse HEAD >/dev/null 2>&1; then
        git --git-dir="$LMBENCH_SRC" archive HEAD | tar -x -C "$src"
    elif curl -sfI -m 10 https://github.com >/dev/null 2>&1; then
        git clone -q --depth 1 https://github.com/intel/lmbench "$src" 2>"$WORK/clone.log" ||
            { LMBENCH_WHY="git clone of intel/lmbench failed: $(tail -n 1 "$WORK/clone.log")"; return 1; }
    else
        LMBENCH_WHY="no network to clone intel/lmbench (curl https://github.com failed) and no --lmbench-src"
        return 1
    fi
    [[ -f "$src/src/lat_syscall.c" ]] || { LMBENCH_WHY="no src/lat_syscall.c in the lmbench source"; return 1; }
}

lmbench_tirpc() {
    [[ -f /usr/include/tirpc/rpc/rpc.h ]] && return 0
    if ((EUID == 0)) && command -v apt-get >/dev/null; then
        echo "installing libtirpc-dev (lmbench needs it) ..." >&2
        apt-get install -y libtirpc-dev >"$WORK/apt.log" 2>&1 ||
            { apt-get update >>"$WORK/apt.log" 2>&1 && apt-get install -y libtirpc-dev >>"$WORK/apt.log" 2>&1; } ||
            { LMBENCH_WHY="apt-get install libtirpc-dev failed: $(tail -n 1 "$WORK/apt.log")"; return 1; }
    else
        LMBENCH_WHY="lmbench needs libtirpc-dev (as root: apt-get install -y libtirpc-dev)"
        return 1
    fi
}

lmbench_build() {
    local program missing=0
    for program in "$@"; do [[ -x "$LMBENCH_BIN/$program" ]] || missing=1; done
    ((missing)) || return 0
    lmbench_fetch && lmbench_tirpc || return 1
    mkdir -p "$LMBENCH_BIN"
    # Each program and the lmbench library it links (its own Makefile probes the system with
    # scripts; these are the sources and flags that probing settles on for glibc).
    local s="$LMBENCH_CACHE/src/src"
    for program in "$@"; do
        [[ -f "$s/$program.c" ]] || { LMBENCH_WHY="no src/$program.c in the lmbench source"; return 1; }
        cc -O2 -w -DHAVE_uint64_t -DHAVE_int64_t -DHAVE_socklen_t -I/usr/include/tirpc \
            -o "$LMBENCH_BIN/$program" "$s/$program.c" "$s/lib_timing.c" "$s/lib_mem.c" "$s/lib_stats.c" \
            "$s/lib_debug.c" "$s/getopt.c" "$s/lib_sched.c" "$s/lib_tcp.c" "$s/lib_udp.c" \
            "$s/lib_unix.c" -ltirpc -lm 2>"$WORK/cc.log" ||
            { LMBENCH_WHY="building $program failed: $(tail -n 1 "$WORK/cc.log")"; return 1; }
    done
}

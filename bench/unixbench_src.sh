# shellcheck shell=bash
# bench/unixbench_src.sh — byte-unixbench's source and build for the benchmark scripts;
# sourced, not run.
#
# The sourcing script sets ROOT (the repository), SRC (a directory given by --src, or empty),
# SCRIPT (its name, for messages) and BINARY (--binary, or empty), defines die MESSAGE and
# has sourced bench/lib.sh; sourcing defines:
#   unixbench_source     settle SRC: $UNIXBENCH_SRC, else ./byte-unixbench; the repository
#                        root or its UnixBench/ folder. Without a source it says how to get
#                        one and exits 0 (nothing to compare with is not a failure)
#   unixbench_prepare    unixbench_source, then lib.sh's oslab_prepare: OSLAB, WORK and DB
#   unixbench_build DIR  copy the source to DIR/UnixBench and build it there (make)

unixbench_source() {
    [[ -z $SRC ]] && SRC=${UNIXBENCH_SRC:-}
    [[ -z $SRC && -d ./byte-unixbench ]] && SRC=./byte-unixbench
    if [[ -n $SRC && -d $SRC/UnixBench ]]; then SRC=$SRC/UnixBench; fi
    if [[ -z $SRC || ! -f $SRC/Run || ! -f $SRC/src/fstime.c ]]; then
        cat <<HOW
$SCRIPT: byte-unixbench's source is not here, so there is nothing to compare with.
  Get it (it is GPL-2.0, and oslab does not ship it):
    git clone https://github.com/kdlucas/byte-unixbench
  then run this script from the directory holding byte-unixbench/, or point to it:
    UNIXBENCH_SRC=/path/to/byte-unixbench bench/$SCRIPT
  oslab's own figures need no source: oslab run --suite unixbench
HOW
        exit 0
    fi
    local tool
    for tool in cc make perl python3; do
        command -v "$tool" >/dev/null || die "$tool is needed to build and run UnixBench and to read the figures"
    done
}

unixbench_build() {
    cp -r "$SRC" "$1/UnixBench"
    make -C "$1/UnixBench" >"$1/make.log" 2>&1 || { tail -n 20 "$1/make.log" >&2; die "UnixBench's make failed"; }
}

unixbench_prepare() {
    unixbench_source
    oslab_prepare "${SCRIPT%.sh}"
}

#!/usr/bin/env bash
# Build the eBPF object oslab embeds (src/platform/linux/bpf/systrace.bpf.o) from
# bpf/systrace.bpf.c with Debian's clang and libbpf headers.
#   bpf/build.sh           rebuild the committed object
#   bpf/build.sh --check   rebuild into a temporary file and fail if it differs
#   bpf/build.sh --install install clang and libbpf-dev first (apt-get)
# The object is committed so that building oslab needs no clang; .ci/run checks it.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    --install)
      if ! command -v clang >/dev/null || [ ! -f /usr/include/bpf/bpf_helpers.h ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libbpf-dev >/dev/null
      fi ;;
    *) echo "usage: bpf/build.sh [--install] [--check]" >&2; exit 2 ;;
  esac
done
out=src/platform/linux/bpf/systrace.bpf.o
target=$out
if [ "$check" = 1 ]; then
  target=$(mktemp --suffix=.bpf.o)
  trap 'rm -f "$target"' EXIT
fi
arch_include=/usr/include/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
# -g for the BTF that the loader needs (maps, globals); the DWARF is then stripped,
# and paths are relative, so the object does not depend on where the tree is.
clang -O2 -g -target bpf -I"$arch_include" -fdebug-prefix-map="$PWD"=. \
  -c bpf/systrace.bpf.c -o "$target"
llvm-strip -g "$target"
if [ "$check" = 1 ]; then
  if ! cmp -s "$target" "$out"; then
    echo "bpf/build.sh --check: $out is not bpf/systrace.bpf.c's object; run bpf/build.sh and commit it" >&2
    exit 1
  fi
  echo "bpf/build.sh --check: $out matches its source ($(clang --version | head -1))"
fi

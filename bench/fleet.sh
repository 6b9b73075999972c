#!/usr/bin/env bash
# The fleet store's speed (docs/fleet.md): push throughput for a 100-run history, and the
# time of the fleet view (`report --store URL --by kernel|host`) over 1,000 runs (target:
# under 2 s). The runs are copies of one real `oslab run --quick` of the default suite, as 20
# machines on three kernels would push them, into a throwaway PostgreSQL (.ci/postgres).
# Takes a few minutes; prints the figures.
set -euo pipefail
cd "$(dirname "$0")/.."

bash .ci/postgres install
work=$(mktemp -d /tmp/oslab-bench-fleet.XXXXXX)
# The server runs as the user postgres when this is root: it must reach its directory.
chmod 755 "$work"
trap 'bash .ci/postgres stop "$work/pg"; rm -rf "$work"' EXIT
OSLAB_TEST_PG=$(bash .ci/postgres start "$work/pg")
export OSLAB_TEST_PG

cargo build --release --quiet
echo "== the seed: one run of the default suite (--quick)"
target/release/oslab --db "$work/seed.db" run --quick >/dev/null
echo "== pushing and reporting"
OSLAB_BENCH_SEED="$work/seed.db" cargo test --release --quiet --test fleet \
    bench_push_and_fleet_view -- --ignored --nocapture 2>&1 | grep -E '^(push|fleet view)'

#!/usr/bin/env bash
# `oslab import` of a large export (issue 31, defect 2): generates an export of about
# SIZE_MB (default 200) MB — copies of one real result of `oslab run --quick`, written a
# result at a time in `oslab export`'s field order — imports it into a new database under
# /usr/bin/time -v, and prints the file's size, the peak RSS and the seconds. Import reads
# the document as a stream (one result in memory at a time): the peak stays near a constant
# whatever the size. Then exports the imported run back (`export 1 -o FILE`, written a result
# at a time as read) under the same measure. OSLAB=path uses that binary instead of a fresh
# release build.
set -euo pipefail
cd "$(dirname "$0")/.."

size_mb=${SIZE_MB:-200}
if [[ -z ${OSLAB:-} ]]; then
    cargo build --release --quiet
    OSLAB=target/release/oslab
fi
[[ -x /usr/bin/time ]] || { echo "bench/import.sh: needs /usr/bin/time (GNU time)" >&2; exit 1; }
work=$(mktemp -d /tmp/oslab-bench-import.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$OSLAB" --db "$work/seed.db" run syscall.getppid --quick --budget 0.2 >/dev/null 2>&1
"$OSLAB" --db "$work/seed.db" export 1 -o "$work/seed.json" 2>/dev/null
python3 - "$work/seed.json" "$work/large.json" "$size_mb" <<'PY'
import json, sys
seed, out, size_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
doc = json.load(open(seed))
run = doc["run"]
run.pop("uuid", None)  # another run than the seed
result = run.pop("results")[0]
samples = result["samples"]
result["samples"] = [samples[i % len(samples)] for i in range(1000)]
text = json.dumps(result, separators=(",", ":"))
count = max(1, int(size_mb * 1e6 / (len(text) + 1)))
head = json.dumps(run, separators=(",", ":"))[:-1]
with open(out, "w") as f:
    f.write('{"format":"oslab-run","format_version":1,"run":' + head + ',"results":[')
    for i in range(count):
        f.write(("," if i else "") + text)
    f.write("]}}\n")
print(f"{count} results of {len(result['samples'])} samples", file=sys.stderr)
PY
bytes=$(stat -c %s "$work/large.json")
/usr/bin/time -v "$OSLAB" --db "$work/import.db" import "$work/large.json" \
    2>"$work/time.txt" || { cat "$work/time.txt" >&2; exit 1; }
# "WHAT: file SIZE MB, peak RSS R MB, S s" from a /usr/bin/time -v report.
figures() {
    local what=$1 bytes=$2 report=$3 rss_kb wall
    rss_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$report")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$report")
    awk -v what="$what" -v b="$bytes" -v r="$rss_kb" -v w="$wall" 'BEGIN {
        n = split(w, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]
        printf "%s: file %.1f MB, peak RSS %.1f MB, %.1f s\n", what, b / 1e6, r / 1024, s }'
}
figures import "$bytes" "$work/time.txt"
/usr/bin/time -v "$OSLAB" --db "$work/import.db" export 1 -o "$work/export.json" \
    2>"$work/time.txt" || { cat "$work/time.txt" >&2; exit 1; }
figures export "$(stat -c %s "$work/export.json")" "$work/time.txt"

#!/usr/bin/env bash
# The content fingerprint's quality and speed, end to end (docs/features/content-seen.md,
# "Quality"): generates the corpus with planted duplicates (bench/content_corpus.py), runs
# urlsieve's LinkExtractor text + SimHash over it (bench_content_quality: precision and recall per
# kind for k = 1..6), then Debian's `simhash` (scripts/setup.sh --bench installs it) on the same
# pages' visible text, written to .txt files by bench_content_quality: its speed, and the agreement
# of the two on which pairs are near-duplicates (both / either).
#   bench/content_quality.sh [BUILD_DIR] [--distinct N] [--copies N]
# Debian's simhash is Manasse's shingleprint (the 128 smallest hashes of 8-byte shingles), not
# Charikar's: it reports a similarity in 0..1 for each pair (-m); SIMHASH_THRESHOLD (default 0.9)
# is where it calls a pair near-duplicate, urlsieve at SimHash distance <= 3.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [[ $# -gt 0 && "$1" != --* ]]; then build=$1; shift; fi
threshold=${SIMHASH_THRESHOLD:-0.9}
command -v simhash >/dev/null || { echo "no simhash: scripts/setup.sh --bench" >&2; exit 1; }
[[ -x "$build/bench/bench_content_quality" ]] || cmake --build "$build" --target bench_content_quality

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/content_corpus.py "$work/corpus" "$@"
mkdir -p "$work/txt"
"$build/bench/bench_content_quality" "$work/corpus" --text-dir "$work/txt" --pairs "$work/urlsieve.pairs"
n=$(ls "$work/txt" | wc -l)

echo
echo "Debian simhash $(dpkg-query -W -f='${Version}' simhash 2>/dev/null || echo '?') on the same $n visible-text files:"
cd "$work/txt"
start=$(date +%s.%N)
simhash -w ./*.txt
end=$(date +%s.%N)
echo "  hashes (-w): $(python3 -c "print(f'{$n / ($end - $start):.0f}')") files/s"
start=$(date +%s.%N)
simhash -m ./*.txt > "$work/simhash.matrix"
end=$(date +%s.%N)
echo "  all pairs (-m, hashing included): $(python3 -c "print(f'{($end - $start):.1f}')") s"
cd - >/dev/null

python3 - "$work/simhash.matrix" "$work/urlsieve.pairs" "$threshold" <<'EOF'
import sys
matrix, pairs_file, threshold = sys.argv[1], sys.argv[2], float(sys.argv[3])
theirs = set()
with open(matrix) as f:
    next(f)  # the column header
    for line in f:
        fields = line.split()
        name, row = fields[0], int(fields[1]) - 1
        for col, value in enumerate(fields[2:]):
            if col < row and float(value) >= threshold:
                theirs.add((col, row))
ours = set()
with open(pairs_file) as f:
    for line in f:
        i, j = map(int, line.split())
        ours.add((i, j))
both, either = len(ours & theirs), len(ours | theirs)
print(f"  near-duplicate pairs: urlsieve (distance <= 3) {len(ours)}, simhash "
      f"(similarity >= {threshold}) {len(theirs)}, both {both}, either {either}, agreement "
      f"{both / either if either else 1:.3f}")
EOF

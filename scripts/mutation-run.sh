#!/bin/bash
# A seeded, stratified mutation run over src/ (issue 25; docs/RELIABILITY.md "Mutation score").
#
#   scripts/mutation-run.sh [SEED [COUNT [STRATUM...]]]   (defaults: seed 2025, 64 mutants, all)
#
# Every directory of src/ is one stratum; each gets a share of COUNT proportional to its
# number of candidate mutations (the operator flips of ../shared/tools/mutants.py), at least 2.
# For each stratum, mutants.py plants that many compiling mutants, one at a time, drawn with
# --seed SEED from all the stratum's candidates, rebuilds build-mut incrementally (the mutated
# file and the link; executables are not relinked against a changed libhwrt.so,
# CMAKE_LINK_DEPENDS_NO_SHARED) and runs scripts/mutation-test.sh: the plain CTest suites,
# the directory's suites first, stopping at the first failing test; with a per-test coverage
# map of HEAD (build it first: `nice -n 5 scripts/mutation-covmap.sh`, BUILD/covmap.json) only
# the tests that execute the mutated line, else every suite (mutation-test.sh says which).
# src/backends/cuda is sampled only in its files that run without a GPU here (CUDA_FILES);
# a survivor on a line no test here executes is reported apart ("not covered", with a map),
# not counted.
# Output in build-mut/mutation-SEED/: strata-STRATUM.log (one line per mutant; "/" is "_";
# the strata named on the command line are run again, the others' logs are kept), NNN.log
# per mutant (diff, phase, failing test), summary.txt (counts per stratum, over every
# strata-*.log). A stratum's mutants depend only on SEED, its files and mutants.py, so
# strata may be shared out between worktrees of one commit (each with its build-mut) and
# their strata-*.log put together (docs/RELIABILITY.md "Mutation score").
# With HWRT_MUTATION_SAN=DIR (from the tree's root) a survivor of the plain suites is also run
# under make test's sanitizer stage, built in DIR (configured and built here first; the
# stage's suites must pass on the unmutated tree, which mutation-test.sh checks with the
# plain ones).
# Needs a clean src/ (mutants are planted into the tree and restored after each).
set -u
SEED=${1:-2025}
COUNT=${2:-64}
shift $(($# < 2 ? $# : 2))
ONLY=" $* "
ROOT=$(git rev-parse --show-toplevel)
cd "$ROOT" || exit 2
MUTANTS=${HWRT_MUTANTS:-../shared/tools/mutants.py}
BUILD=${HWRT_MUTATION_BUILD:-build-mut}
OUT=$BUILD/mutation-$SEED
PY=/usr/bin/python3
CUDA_FILES=${HWRT_MUTATION_CUDA_FILES:-src/backends/cuda/cuda_api.c src/backends/cuda/cuda_cupti.c src/backends/cuda/cuda_launch.c src/backends/cuda/cuda_nvml.c src/backends/cuda/cuda_usage.c}

if ! git diff --quiet HEAD -- src; then
  echo "mutation-run: src/ has uncommitted changes; commit them first (mutants are planted into the tree)" >&2
  exit 2
fi
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_LINK_DEPENDS_NO_SHARED=ON >/dev/null || exit 2
cmake --build "$BUILD" -j2 >/dev/null || exit 2
if [ -n "${HWRT_MUTATION_SAN:-}" ]; then       # the sanitizer stage's build (mutation-test.sh)
  cmake -S . -B "$HWRT_MUTATION_SAN" -DHWRT_SANITIZE=address -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_LINK_DEPENDS_NO_SHARED=ON >/dev/null || exit 2
  cmake --build "$HWRT_MUTATION_SAN" -j2 >/dev/null || exit 2
fi
mkdir -p "$OUT"

# stratum name, then its files
strata=$($PY - "$MUTANTS" "$COUNT" "$CUDA_FILES" <<'EOF'
import glob, importlib.util, sys
spec = importlib.util.spec_from_file_location("mutants", sys.argv[1])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
count, cuda = int(sys.argv[2]), sys.argv[3].split()
groups = {}
for f in sorted(glob.glob("src/**/*.c", recursive=True)):
    parts = f.split("/")
    d = "/".join(parts[1:3]) if parts[1] in ("backends", "plugins") and len(parts) > 3 else parts[1]
    if d == "backends/cuda" and f not in cuda:
        continue
    groups.setdefault(d, []).append(f)
cand = {d: sum(len(m.candidates(open(f).read().split("\n"))) for f in fs) for d, fs in groups.items()}
total = sum(cand.values())
for d in sorted(groups):
    n = max(2, round(count * cand[d] / total))
    print(d, n, cand[d], " ".join(groups[d]))
EOF
)
echo "$strata" | awk '{print $1, $2, $3}' > "$OUT/strata.txt"
echo "seed $SEED, $COUNT mutants asked; stratum, mutants, candidates:"; cat "$OUT/strata.txt"

while read -r name n cands files; do
  [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $name "* ]] || continue
  log=$OUT/strata-${name//\//_}.log
  echo "== $name ($n of $cands candidates)" | tee "$log"
  $PY "$MUTANTS" --files $files -n "$n" --seed "$SEED" --build "$BUILD" --timeout 3000 \
      --test "scripts/mutation-test.sh $BUILD $OUT" < /dev/null 2>&1 | tee -a "$log"
done <<< "$strata"

{
  echo "seed $SEED"
  touch "$OUT/not-covered.txt"
  awk 'FNR==NR{nc[$1]=1; next} /^== /{d=$2} /^killed/{k[d]++; t[d]++}
       /^SURVIVED/{t[d]++; loc=$2; sub(/:$/, "", loc); if (loc in nc) c[d]++; else s[d]++}
       END{for (d in t) {printf "%-18s %3d mutants %3d killed %3d survived %3d not covered\n", d, t[d], k[d], s[d], c[d]; K+=k[d]; T+=t[d]; C+=c[d]}
           printf "total %d mutants, %d killed, %d survived, %d not covered\n", T, K, T-K-C, C}' \
      "$OUT/not-covered.txt" "$OUT"/strata-*.log | sort
  grep -h '^SURVIVED' "$OUT"/strata-*.log
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"

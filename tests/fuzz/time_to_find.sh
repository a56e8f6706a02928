#!/bin/bash
# Time-to-find of the model fuzzer (docs/RELIABILITY.md): RUNS runs of SECONDS each, going
# on after each finding; every crash file is replayed and labelled with the issue case it
# shows, and the first time each label appeared in a run is printed, then the median over
# runs, with each run's executions and the load average at its start and end.
#   tests/fuzz/time_to_find.sh [RUNS=5] [SECONDS=90] [BIN=build-fuzz/tests/fuzz/hwrt_fuzz_model]
# MODE=fork (default): libFuzzer in fork mode (-fork=1 -ignore_crashes=1);
# MODE=restart: one libFuzzer process as make test runs it, started again on the same
#   corpus after each finding until SECONDS are used;
# MODE=random: BIN is a build without libFuzzer (build/tests/fuzz/hwrt_fuzz_model): its
#   --random generator with seed SEED_BASE + run, started again after each finding with
#   the input after it.
# CORPUS="DIR ...": seed corpus directories, read, never written (default: none, an empty
#   corpus, so no seed encodes a bug). SEED_BASE (0) offsets the seeds.
# Keeps one crash file per label and run under $OUT (default build-fuzz/ttf/findings).
# The tree before the issue 15 fixes (docs/RELIABILITY.md "Time to find"):
#   git worktree add --detach /tmp/ttf 4c4fc6a      # 583322e + the deterministic sim
#   cp tests/fuzz/fuzz_model.c /tmp/ttf/tests/fuzz/  # today's harness, and a shim
#   printf '%s\n' '#define HWI_OP_LIST(X) X(FILL,"Fill","fill",0,0,0) X(ADD,"Add","add",2,0,0) \' \
#     'X(MUL,"Mul","mul",2,0,0) X(SCALE,"Scale","scale",1,0,0) X(RELU,"Relu","relu",1,0,0) \' \
#     'X(CAST,"Cast","cast",1,0,1) X(MATMUL,"MatMul","matmul",2,0,0) X(SUM,"ReduceSum","sum",1,0,0)' \
#     > /tmp/ttf/tests/fuzz/op_table.h
#   sed -i '/-fvisibility=hidden/d' /tmp/ttf/CMakeLists.txt   # the harness calls sim_fault_load
#   # the sim's deterministic preemption point, removed in 2b6f539: it deadlocks (a hang is a
#   # 20 s libFuzzer timeout) on the cross-stream waits of the overlap step
#   sed -i '/sim_sched_preempt();   \/\* deterministic/d' /tmp/ttf/src/backends/sim/sim_stream.c
#   (cd /tmp/ttf && CC=clang cmake -S . -B build-fuzz -DHWRT_SANITIZE=fuzzer \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build-fuzz -j2 --target hwrt_fuzz_model)
#   HWRT_FUZZ_NO=threads,shutdown,dlpack tests/fuzz/time_to_find.sh 5 60 \
#     /tmp/ttf/build-fuzz/tests/fuzz/hwrt_fuzz_model
# (HWRT_FUZZ_NO=...,leaks also masks 15.4, whose crashing inputs never enter the corpus.)
# Campaign F (docs/RELIABILITY.md): the seeds that do not encode those bugs, then
#   mkdir /tmp/c && (cd tests/fuzz/corpus-model && cp $(ls -p | grep -v / | grep -v '^issue15') \
#     enc2/same-dtype-cast-int64 /tmp/c)
#   MODE=restart CORPUS=/tmp/c HWRT_FUZZ_NO=threads,shutdown,dlpack,leaks \
#     tests/fuzz/time_to_find.sh 5 60 /tmp/ttf/build-fuzz/tests/fuzz/hwrt_fuzz_model
#   (cd /tmp/ttf && cmake -S . -B build && cmake --build build -j2 --target hwrt_fuzz_model)
#   MODE=random HWRT_FUZZ_NO=threads,shutdown,dlpack,leaks \
#     tests/fuzz/time_to_find.sh 5 60 /tmp/ttf/build/tests/fuzz/hwrt_fuzz_model
# A crash file whose finding names several wrong tensors gets a label for each.
set -u
RUNS=${1:-5}; SECS=${2:-90}
BIN=$(realpath "${3:-build-fuzz/tests/fuzz/hwrt_fuzz_model}")
OUT=$(realpath -m "${OUT:-build-fuzz/ttf}")
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUT/findings"
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1

label() {   # crash file -> issue case
  local f=$1 out b0 shut
  out=$(timeout 60 "$BIN" "$f" 2>&1)
  b0=$(od -An -tu1 -N1 "$f" | tr -d ' ')
  local msg; msg=$(printf '%s\n' "$out" | grep -m1 'hwrt model:')
  case ",${HWRT_FUZZ_NO:-}," in *threads*) ;; *)
    if [ $((b0 % 4)) -eq 2 ]; then echo "16.2-destroy-while-in-use"; return; fi;; esac
  if [ -z "$msg" ] && ! printf '%s\n' "$out" | grep -q 'ERROR: AddressSanitizer'; then
    echo "no-replay"; return; fi
  if printf '%s\n' "$out" | grep -q 'in sim_kick_blocked'; then echo "16.3-blocked-list"; return; fi
  case "$msg" in
    *"stale DLPack"*) echo "16.5-stale-dlpack"; return;;
    *"reading 0 bytes back from the disk tier"*) echo "new-empty-tensor-disk-tier"; return;;
    # a failed set_offloadable(t, 0) left t pinned (fixed in c8e1ca7)
    *"hwrt_offload_evict"*"pinned to the device"*) echo "new-unpin-left-pinned"; return;;
  esac
  shut=$(HWRT_FUZZ_TRACE=1 timeout 60 "$BIN" "$f" 2>&1 | grep -c '^step 13')
  case ",${HWRT_FUZZ_NO:-}," in *shutdown*) shut=0;; esac
  case "$msg" in
    *"after hwrt_shutdown the offload"*|*"tier file is left"*|*"after the input's last shutdown"*)
      echo "15.5-shutdown-live"; return;;
    *"tiers still hold"*)
      if [ "$shut" -gt 0 ]; then echo "15.5-shutdown-live"; else echo "15.4-eviction-leak"; fi; return;;
    *"wrong data"*"; tensor "*)
      # the teardown reports every wrong tensor ("; " between them): a label for each
      printf '%s\n' "$msg" | sed 's/; tensor /\ntensor /g' | while IFS= read -r part; do
        label_wrong "$part" "$b0" "$shut"; done | sort -u | tr '\n' ' '
      return;;
  esac
  label_wrong "$msg" "$b0" "$shut" || echo "other:$(printf '%s' "${msg:-$(printf '%s\n' "$out" | grep -m1 -oE 'ERROR: AddressSanitizer: [a-z-]+')}" | sed 's/[0-9][0-9]*/N/g' | cut -c1-90 | tr ' ' _)"
}

label_wrong() {   # one wrong-data sentence -> issue case (1: not a wrong-data sentence)
  local msg=$1 b0=$2 shut=$3
  case "$msg" in
    *"[tier file tampered]"*"wrong data"*|*"[a tier file was tampered]"*"wrong data"*)
      echo "15.6-tampered-tier-file"; return;;
    # kept through a fault (confirmed before it) and wrong after the reset: where the
    # runtime had it then says which transfer never landed
    *"[kept through a fault: "*"[on the device tier at the reset]"*"wrong data"*)
      echo "15.2-fault-in-fetch"; return;;       # marked resident, the fetch never landed
    *"[kept through a fault: "*"[on the host tier at the reset]"*"wrong data"*|*"[kept through a fault: "*"[on the disk tier at the reset]"*"wrong data"*)
      echo "15.3-fault-in-write-back"; return;;  # marked saved, the save never landed
    *"[kept through a fault: "*"wrong data"*)
      echo "other:wrong-data-after-a-fault"; return;;
    *"wrong data"*)
      if [ $((b0 % 4)) -eq 3 ]; then
        case "$msg" in *D2H*) echo "15.3-fault-in-write-back";; *) echo "15.2-fault-in-fetch";; esac
      elif [ "$shut" -gt 0 ] && [ -n "$(printf '%s' "$msg" | grep -o 'not a live tensor')" ]; then
        echo "15.5-shutdown-live"
      else echo "15.1-pending-writer"; fi
      return;;
  esac
  if [ -z "$msg" ] && [ "$shut" -gt 0 ]; then echo "15.5-shutdown-live"; return; fi
  return 1
}

left() { awk -v e="$1" -v n="$(date +%s.%N)" 'BEGIN { r = int(e - n); print (r > 0 ? r : 0) }'; }

# RELABEL=1: label the crash files of existing runs again (start time from log.txt)
for r in $(seq 1 "$RUNS"); do
  d="$OUT/run$r"
  if [ -n "${RELABEL:-}" ]; then
    read -r t1 _ f1 < "$d/labels.txt"; t0=$(echo "$(stat -c %.3Y "$f1") - $t1" | bc); else
  rm -rf "$d"; mkdir -p "$d/corpus" "$d/a"
  load0=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s.%N); end=$(echo "$t0 + $SECS" | bc); k=0; first=0; execs=0
  case "${MODE:-fork}" in
  fork)
    (cd "$d" && timeout $((SECS + 60)) "$BIN" -fork=1 -ignore_crashes=1 -max_total_time="$SECS" \
        -max_len=600 -len_control=0 -timeout=20 -rss_limit_mb=4096 -seed=$((r + ${SEED_BASE:-0})) \
        -artifact_prefix=a/ corpus ${CORPUS:-} > log.txt 2>&1)
    execs=$(grep -oE '^#[0-9]+' "$d/log.txt" | tail -1 | tr -d '#');;
  restart)
    while rem=$(left "$end"); [ "$rem" -gt 0 ]; do
      (cd "$d" && timeout $((rem + 60)) "$BIN" -max_total_time="$rem" -max_len=600 -len_control=0 \
          -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
          -seed=$((1000 * (r + ${SEED_BASE:-0}) + k)) -artifact_prefix=a/$k- corpus ${CORPUS:-} \
          > log$k.txt 2>&1)
      n=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$d/log$k.txt" | grep -oE '[0-9]+$')
      execs=$((execs + ${n:-0})); k=$((k + 1))
    done;;
  random)
    while rem=$(left "$end"); [ "$rem" -gt 0 ]; do
      (cd "$d" && rm -f model-finding.bin && timeout $((rem + 60)) "$BIN" --random "$rem" \
          $((r + ${SEED_BASE:-0})) "$first" > log$k.txt 2>&1) 2>/dev/null
      idx=$(grep -m1 -oE 'random input [0-9]+' "$d/log$k.txt" | grep -oE '[0-9]+$')
      if [ -n "$idx" ] && [ -f "$d/model-finding.bin" ]; then
        mv "$d/model-finding.bin" "$d/a/crash-random-$idx"
        execs=$((execs + idx + 1 - first)); first=$((idx + 1))
      else
        n=$(grep -oE '[0-9]+ random inputs' "$d/log$k.txt" | grep -oE '^[0-9]+')
        execs=$((execs + ${n:-0})); break
      fi
      k=$((k + 1))
    done;;
  esac
  echo "$execs executions, load $load0 -> $(cut -d' ' -f1 /proc/loadavg)" > "$d/stats.txt"
  fi
  for f in "$d"/a/*crash-*; do
    [ -e "$f" ] || continue
    t=$(stat -c %.3Y "$f")
    for l in $(label "$f"); do echo "$(echo "$t - $t0" | bc) $l $f"; done
  done | sort -n > "$d/labels.txt"
  awk '!seen[$2]++ {print $2, $1, $3}' "$d/labels.txt" > "$d/first.txt"
  while read -r l t f; do cp "$f" "$OUT/findings/$l-run$r"; done < "$d/first.txt"
  echo "run $r: $(cat "$d/stats.txt" 2>/dev/null)"; sed 's/^/  /' "$d/first.txt" | cut -d' ' -f1-4
done
echo "median time-to-find over $RUNS runs of $SECS s (found/runs; a miss counts as > $SECS s):"
cat "$OUT"/run*/first.txt | awk '{print $1, $2}' | sort -k1,1 -k2,2n | awk -v runs="$RUNS" -v secs="$SECS" '
  { t[$1] = t[$1] " " sprintf("%.1f", $2); n[$1]++ }
  END { for (l in t) { split(substr(t[l], 2), a, " "); i = int((runs + 1) / 2);
        m = i <= n[l] ? sprintf("%6.1f s", a[i]) : "> " secs " s";
        printf "  %-28s %3d/%d  median %s  (%s)\n", l, n[l], runs, m, substr(t[l], 2) } }' | sort
echo "executions per run: $(cat "$OUT"/run*/stats.txt 2>/dev/null | cut -d' ' -f1 | tr '\n' ' ')"

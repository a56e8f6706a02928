#!/bin/bash
# Replay each crash file given with the fuzzer binary ($1) and print one signature line per
# file: "<file> <signature>", the signature being the harness's "hwrt model:" reason with
# numbers removed, or the sanitizer's error kind and first hwrt frame.
# Usage: tests/fuzz/classify.sh build-fuzz/tests/fuzz/hwrt_fuzz_model crash-*
bin=$1; shift
for f in "$@"; do
  out=$(ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 timeout 60 "$bin" "$f" 2>&1)
  rc=$?
  sig=$(printf '%s\n' "$out" | grep -m1 -o 'hwrt model: [^(]*' | sed 's/hwrt model: //; s/[0-9][0-9]*/N/g')
  if [ -z "$sig" ]; then
    kind=$(printf '%s\n' "$out" | grep -m1 -oE 'ERROR: (AddressSanitizer|ThreadSanitizer|UndefinedBehaviorSanitizer|libFuzzer): [a-zA-Z-]+' | sed 's/ERROR: //')
    frame=$(printf '%s\n' "$out" | grep -m1 -E '#[0-9]+ 0x[0-9a-f]+ in [a-z_]+ .*/src/' | sed -E 's/.* in ([a-zA-Z_0-9]+) .*\/(src\/[^:]*).*/\1 \2/')
    sig="${kind:-rc=$rc} ${frame}"
  fi
  echo "$(basename "$f") $sig"
done

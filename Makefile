# hwrt — top-level commands. Everything is built with CMake under build*/.
# Each installs (as root) or names the Debian packages it needs, and no more
# (scripts/deps.sh build|bench|test):
#   make run      build and run the main demo on the simulated NPU (build deps only)
#   make test     build and run every test suite (build + test toolchain), then
#                 the same suites under ASan+UBSan+LeakSanitizer (build-asan), the
#                 "concurrency" tests under TSan (build-tsan) and the API fuzzer for
#                 FUZZ_TEST_SECONDS (build-fuzz, clang + libFuzzer); see docs/RELIABILITY.md
#   make fuzz     run both API fuzzers longer: make fuzz FUZZ_SECONDS=3600
#   make bench    build and run hwrt-bench (figures with same-run baselines)
#   make coverage line and branch coverage of src/ by the plain suites (build-cov, gcovr;
#                 scripts/coverage.sh, docs/RELIABILITY.md "Coverage")
#   make install  install library, headers, tools (PREFIX=/usr/local)
NPROC  ?= $(shell nproc 2>/dev/null || echo 2)
SHELL  := /bin/bash
PREFIX ?= /usr/local
BUILD  ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps deps-bench deps-test build run test test-main test-asan test-tsan test-fuzz fuzz fuzz-build bench coverage install clean

# Sanitizer passes. Labels other suites add that cannot run under a sanitizer runtime
# (a Python interpreter or mpirun loading an instrumented libhwrt) are left out there;
# they run in test-main; so do the install tests, whose outside programs are not built
# with the sanitizer runtime, and the 2 GiB disk-tier test (label large: its memory
# doubles under ASan's shadow), and the fault sweeps (label sweep: hundreds of children,
# one preloading its own malloc, which the sanitizer runtimes own). Stress tests scale
# down (HWRT_STRESS_SCALE) under sanitizers.
SAN_EXCLUDE       ?= python|mpi|bench|gpu|install|large|sweep
SAN_STRESS_SCALE  ?= 0.3
FUZZ_TEST_SECONDS ?= 60
FUZZ_SECONDS      ?= 600
SAN_CMAKE = -DCMAKE_BUILD_TYPE=RelWithDebInfo
ASAN_ENV  = ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:strict_string_checks=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 HWRT_STRESS_SCALE=$(SAN_STRESS_SCALE)
TSAN_ENV  = TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1" \
            HWRT_STRESS_SCALE=$(SAN_STRESS_SCALE) OPENBLAS_NUM_THREADS=1
FUZZ_ENV  = ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# make fuzz grows build-fuzz/corpus across runs; make test starts from the seeds each time
# (build-fuzz/corpus-ci), so its bounded run spends its time mutating, not replaying.
FUZZ_RUN  = cd build-fuzz && $(FUZZ_ENV) ./tests/fuzz/hwrt_fuzz \
            -rss_limit_mb=4096 -timeout=60 -print_final_stats=1
# The model fuzzer (tests/fuzz/fuzz_model.c) runs in the simulator's deterministic mode
# (its schedule seed is part of each input), with long programs from the start.
# FUZZ_MODEL_NO=threads,shutdown,dlpack leaves those parts out (HWRT_FUZZ_NO).
FUZZ_MODEL_TEST_SECONDS ?= 60
FUZZ_MODEL_NO ?=
FUZZ_MODEL_RUN = cd build-fuzz && $(FUZZ_ENV) HWRT_FUZZ_NO=$(FUZZ_MODEL_NO) ./tests/fuzz/hwrt_fuzz_model \
            -rss_limit_mb=4096 -timeout=60 -max_len=600 -len_control=0 -print_final_stats=1

all: build

deps:
	@sh scripts/deps.sh build

deps-bench:
	@sh scripts/deps.sh bench

deps-test:
	@sh scripts/deps.sh test

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j$(NPROC)

run: build
	./$(BUILD)/examples/hardware_op_demo

# the test toolchain first, so that CMake finds MPI, numpy, pytest when it configures
test-main: deps-test
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --output-on-failure -j$(NPROC) --timeout 600

test: test-main test-asan test-tsan test-fuzz
	@echo "make test: all suites passed (plain, ASan+UBSan+LSan, TSan, fuzzing)"

test-asan: deps-test
	@cmake -S . -B build-asan -DHWRT_SANITIZE=address $(SAN_CMAKE) >/dev/null
	@cmake --build build-asan -j$(NPROC)
	cd build-asan && $(ASAN_ENV) ctest --output-on-failure -j$(NPROC) --timeout 900 -LE '$(SAN_EXCLUDE)'

test-tsan: deps-test
	@cmake -S . -B build-tsan -DHWRT_SANITIZE=thread $(SAN_CMAKE) >/dev/null
	@cmake --build build-tsan -j$(NPROC)
	cd build-tsan && $(TSAN_ENV) ctest --output-on-failure -j$(NPROC) --timeout 900 -L concurrency -LE '$(SAN_EXCLUDE)'

fuzz-build: deps-test
	@CC=clang cmake -S . -B build-fuzz -DHWRT_SANITIZE=fuzzer $(SAN_CMAKE) \
	    -DCMAKE_C_FLAGS=-Wno-unknown-warning-option >/dev/null
	@cmake --build build-fuzz -j$(NPROC) --target hwrt_fuzz hwrt_fuzz_model

# Bounded fuzzing on every submission: a finding fails make test and leaves crash-* in
# build-fuzz/ (replay: ./build-fuzz/tests/fuzz/hwrt_fuzz build-fuzz/crash-...).
test-fuzz: fuzz-build
	rm -rf build-fuzz/corpus-ci build-fuzz/corpus-model-ci
	mkdir -p build-fuzz/corpus-ci build-fuzz/corpus-model-ci
	$(FUZZ_RUN) -max_total_time=$(FUZZ_TEST_SECONDS) corpus-ci ../tests/fuzz/corpus 2>&1 | \
	    grep -v 'failed to allocate' | tail -40; exit $${PIPESTATUS[0]}
	$(FUZZ_MODEL_RUN) -max_total_time=$(FUZZ_MODEL_TEST_SECONDS) -artifact_prefix=model- \
	    corpus-model-ci ../tests/fuzz/corpus-model 2>&1 | tail -30; exit $${PIPESTATUS[0]}

# Both fuzzers at once (one core each), FUZZ_SECONDS each; findings: build-fuzz/crash-*
# (hwrt_fuzz) and build-fuzz/model-crash-* (hwrt_fuzz_model; replay one with
# ./build-fuzz/tests/fuzz/hwrt_fuzz_model FILE, HWRT_FUZZ_TRACE=1 prints every call).
fuzz: fuzz-build
	mkdir -p build-fuzz/corpus build-fuzz/corpus-model
	($(FUZZ_MODEL_RUN) -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=model- corpus-model \
	    ../tests/fuzz/corpus-model > fuzz-model.log 2>&1; echo $$? > fuzz-model.rc) & \
	$(FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) corpus ../tests/fuzz/corpus 2>&1 | \
	    grep -v 'failed to allocate'; rc=$${PIPESTATUS[0]}; wait; \
	    tail -20 fuzz-model.log; exit $$(( rc | $$(cat fuzz-model.rc) ))

# The test toolchain and gcovr (Debian's), which reads the counters.
coverage:
	@sh scripts/deps.sh coverage
	NPROC=$(NPROC) scripts/coverage.sh

bench: deps-bench
	@$(MAKE) --no-print-directory build
	./$(BUILD)/bin/hwrt-bench all

install: build
	cmake --install $(BUILD)

clean:
	rm -rf build build-*

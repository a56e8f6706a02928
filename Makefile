# hwrt — top-level commands. Everything is built with CMake under build*/.
#   make run      build and run the main demo on the simulated NPU
#   make test     build and run every test suite (installs Debian deps when root)
#   make bench    build and run hwrt-bench (figures with same-run baselines)
#   make install  install library, headers, tools (PREFIX=/usr/local)
NPROC  ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local
BUILD  ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps build run test test-main bench install clean

all: build

deps:
	@sh scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j$(NPROC)

run: build
	./$(BUILD)/examples/hardware_op_demo

test-main: build
	cd $(BUILD) && ctest --output-on-failure -j$(NPROC) --timeout 600

test: test-main
	@echo "make test: all suites passed"

bench: build
	./$(BUILD)/bin/hwrt-bench all

install: build
	cmake --install $(BUILD)

clean:
	rm -rf build build-*

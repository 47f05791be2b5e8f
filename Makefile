# The two commands a new user runs: `make demo` and `make test`. Both install
# the system packages (make deps) and build (make build) first.

BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= 2
PREFIX ?= /usr/local
PYTHON ?= /usr/bin/python3

FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60

.PHONY: all deps configure build test demo install format clean fuzz-onnx \
	supported-ops

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then \
	  cmake -G Ninja -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	    -DPython3_EXECUTABLE=$(PYTHON); \
	fi

build: configure
	ninja -C $(BUILD_DIR) -j$(JOBS)

test: build
	$(PYTHON) scripts/run-tests.py --build-dir $(BUILD_DIR) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD_DIR)

install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# The importer's fuzzer, in its own clang-19 build; runs FUZZ_SECONDS and
# keeps what it finds in $(FUZZ_DIR)/findings.
fuzz-onnx: deps
	@command -v clang++-19 >/dev/null || { echo "make fuzz-onnx needs clang-19 and libclang-rt-19-dev (apt-get install clang-19 libclang-rt-19-dev)"; exit 1; }
	@if [ ! -f $(FUZZ_DIR)/build.ninja ]; then \
	  cmake -G Ninja -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
	    -DLLVM_USE_SANITIZER=Address -DLLVM_USE_SANITIZE_COVERAGE=ON \
	    -DMNCC_ENABLE_FUZZERS=ON -DPython3_EXECUTABLE=$(PYTHON); \
	fi
	ninja -C $(FUZZ_DIR) -j$(JOBS) mncc-onnx-import-fuzzer
	mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/findings
	cp examples/models/*.onnxtxt test/onnx/Inputs/*.onnxtxt $(FUZZ_DIR)/corpus/
	ASAN_OPTIONS=detect_leaks=1 $(FUZZ_DIR)/fuzz/mncc-onnx-import-fuzzer \
	  -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=4096 \
	  -artifact_prefix=$(FUZZ_DIR)/findings/ $(FUZZ_DIR)/corpus

# Regenerates docs/supported-ops.md from a conformance run.
supported-ops: build
	$(BUILD_DIR)/bin/mncc-conformance --stage=frontend \
	  --suite=/usr/share/libonnx-testdata/data --markdown=docs/supported-ops.md

format:
	git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)

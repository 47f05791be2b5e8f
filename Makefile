# The two commands a new user runs: `make demo` and `make test`. Both install
# the system packages (make deps) and build (make build) first.

BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= 2
PREFIX ?= /usr/local
PYTHON ?= /usr/bin/python3

FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
# Seconds one input may take (wall time; give more on a busy machine).
FUZZ_TIMEOUT ?= 30

.PHONY: all deps configure build test demo install format clean fuzz-onnx \
	fuzz-run fuzz-vsm fuzz-vsm-run fuzz-layout fuzz-option-json fuzz-configure \
	supported-ops options-doc

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

# The fuzzers, in their own clang-19 build with ASan and UBSan; each runs
# FUZZ_SECONDS (one job, at the lowest priority, so it does not starve a
# build) and keeps what it finds in $(FUZZ_DIR)/findings. The corpora start
# from the test inputs and grow in $(FUZZ_DIR)/corpus-*.
FUZZ_RUN = ASAN_OPTIONS=detect_leaks=1 nice -n 19
# One process, no -jobs: with -jobs libFuzzer runs a child that logs to
# fuzz-0.log in the current folder and shows nothing until it ends.
FUZZ_FLAGS = -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 \
	-timeout=$(FUZZ_TIMEOUT) -print_final_stats=1 \
	-artifact_prefix=$(FUZZ_DIR)/findings/

fuzz-configure: deps
	@command -v clang++-19 >/dev/null || { echo "the fuzzers need clang-19 and libclang-rt-19-dev (apt-get install clang-19 libclang-rt-19-dev)"; exit 1; }
	@if [ ! -f $(FUZZ_DIR)/build.ninja ]; then \
	  cmake -G Ninja -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
	    '-DLLVM_USE_SANITIZER=Address;Undefined' -DLLVM_USE_SANITIZE_COVERAGE=ON \
	    -DMNCC_ENABLE_FUZZERS=ON -DPython3_EXECUTABLE=$(PYTHON); \
	fi
	mkdir -p $(FUZZ_DIR)/findings

# The ONNX importer on any bytes.
fuzz-onnx: fuzz-configure
	ninja -C $(FUZZ_DIR) -j$(JOBS) mncc-onnx-import-fuzzer
	mkdir -p $(FUZZ_DIR)/corpus-onnx
	cp examples/models/*.onnxtxt test/onnx/Inputs/*.onnxtxt $(FUZZ_DIR)/corpus-onnx/
	$(FUZZ_RUN) $(FUZZ_DIR)/bin/mncc-onnx-import-fuzzer $(FUZZ_FLAGS) \
	  -max_len=65536 $(FUZZ_DIR)/corpus-onnx

# Small models imported and run on pfvm:cpu (a 4 MiB memory limit).
fuzz-run: fuzz-configure
	ninja -C $(FUZZ_DIR) -j$(JOBS) mncc-onnx-run-fuzzer
	mkdir -p $(FUZZ_DIR)/corpus-run
	cp test/onnx/Inputs/*.onnxtxt test/tools/mncc/Inputs/*.onnxtxt \
	  fuzz/corpus/run/*.onnxtxt $(FUZZ_DIR)/corpus-run/
	$(FUZZ_RUN) $(FUZZ_DIR)/bin/mncc-onnx-run-fuzzer $(FUZZ_FLAGS) \
	  -max_len=8192 $(FUZZ_DIR)/corpus-run

# The VSM parser alone, and parsed programs run (at most 64 statements).
fuzz-vsm: fuzz-configure
	ninja -C $(FUZZ_DIR) -j$(JOBS) mncc-vsm-parser-fuzzer
	mkdir -p $(FUZZ_DIR)/corpus-vsm
	cp test/sim/*.test $(FUZZ_DIR)/corpus-vsm/ 2>/dev/null || true
	$(FUZZ_RUN) $(FUZZ_DIR)/bin/mncc-vsm-parser-fuzzer $(FUZZ_FLAGS) \
	  -max_len=16384 $(FUZZ_DIR)/corpus-vsm

fuzz-vsm-run: fuzz-configure
	ninja -C $(FUZZ_DIR) -j$(JOBS) mncc-vsm-run-fuzzer
	mkdir -p $(FUZZ_DIR)/corpus-vsm-run
	cp examples/vsm/*.vsm $(FUZZ_DIR)/corpus-vsm-run/ 2>/dev/null || true
	$(FUZZ_RUN) $(FUZZ_DIR)/bin/mncc-vsm-run-fuzzer $(FUZZ_FLAGS) \
	  -max_len=4096 $(FUZZ_DIR)/corpus-vsm-run

# The layout notation.
fuzz-layout: fuzz-configure
	ninja -C $(FUZZ_DIR) -j$(JOBS) mncc-layout-fuzzer
	mkdir -p $(FUZZ_DIR)/corpus-layout
	cp fuzz/corpus/layout/* $(FUZZ_DIR)/corpus-layout/
	$(FUZZ_RUN) $(FUZZ_DIR)/bin/mncc-layout-fuzzer $(FUZZ_FLAGS) \
	  -max_len=1024 $(FUZZ_DIR)/corpus-layout

# option_json files.
fuzz-option-json: fuzz-configure
	ninja -C $(FUZZ_DIR) -j$(JOBS) mncc-option-json-fuzzer
	mkdir -p $(FUZZ_DIR)/corpus-option-json
	cp lib/pipeline/presets/*.json $(FUZZ_DIR)/corpus-option-json/
	$(FUZZ_RUN) $(FUZZ_DIR)/bin/mncc-option-json-fuzzer $(FUZZ_FLAGS) \
	  -max_len=8192 $(FUZZ_DIR)/corpus-option-json

# Regenerates the tables of docs/options.md from OptionTable.def.
options-doc: build
	$(PYTHON) scripts/update-options-doc.py $(BUILD_DIR)/bin/mncc docs/options.md

# Regenerates docs/supported-ops.md from a conformance run.
supported-ops: build
	$(BUILD_DIR)/bin/mncc-conformance --stage=frontend \
	  --suite=/usr/share/libonnx-testdata/data \
	  --markdown=$(BUILD_DIR)/frontend.md > /dev/null || true
	$(BUILD_DIR)/bin/mncc-conformance --stage=run --device=pfvm:cpu \
	  --suite=/usr/share/libonnx-testdata/data \
	  --markdown=$(BUILD_DIR)/pfvm-cpu.md > /dev/null || true
	$(BUILD_DIR)/bin/mncc-conformance --stage=device --device=emu2 \
	  --suite=/usr/share/libonnx-testdata/data \
	  --markdown=$(BUILD_DIR)/emu2-device.md > /dev/null || true
	{ printf '# Supported ONNX models and operators\n\n'; \
	  printf 'Generated by `make supported-ops` over Debian'"'"'s libonnx-testdata (ONNX 1.12).\n\n'; \
	  cat $(BUILD_DIR)/frontend.md $(BUILD_DIR)/pfvm-cpu.md \
	    $(BUILD_DIR)/emu2-device.md; } > docs/supported-ops.md

format:
	git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)

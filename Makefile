# The two commands a new user runs: `make demo` and `make test`. Both install
# the system packages (make deps) and build (make build) first.

BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= 2
PREFIX ?= /usr/local
PYTHON ?= /usr/bin/python3

.PHONY: all deps configure build test demo install format clean

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

format:
	git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)

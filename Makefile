# The two commands a new user needs: `make demo` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEMO ?= examples/gpt3-175b-1024-h100.yaml

.PHONY: all deps build demo test test-asan bench accuracy accuracy-check clean

all: build

deps:
	@scripts/install-deps

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/trainsim run $(DEMO)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Unit tests under AddressSanitizer + UndefinedBehaviorSanitizer, in their own build directory.
test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTRAINSIM_SANITIZE=ON -DTRAINSIM_BUILD_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

bench: build
	bench/run-bench $(BUILD)

# docs/accuracy.md: every public case, then the hand-written discussion of the worst ones, then the
# CI handful's median that `accuracy-check` compares against.
accuracy: build
	$(BUILD)/trainsim validate ../shared/validation/cases --markdown > docs/accuracy.md
	cat docs/accuracy-discussion.md >> docs/accuracy.md
	scripts/accuracy-check $(BUILD)/trainsim --record

accuracy-check: build
	scripts/accuracy-check $(BUILD)/trainsim

clean:
	rm -rf $(BUILD) build-asan

# The two commands a new user needs: `make demo` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEMO ?= examples/gpt3-175b-1024-h100.yaml
# UNITY=ON: unity builds (CMake's TRAINSIM_UNITY), faster from clean, slower after a one-file change; .ci/run sets it.
# It applies when a build directory is configured (build/: its first build; build-asan, build-tsan: every time).
UNITY ?= OFF

.PHONY: all deps build demo test python test-asan test-tsan bench golden golden-check accuracy accuracy-check accuracy-docs-check keys-docs format format-check tidy clean

all: build

deps:
	@scripts/install-deps

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_UNITY=$(UNITY)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/trainsim run $(DEMO)

# After a failure, the failed checks' messages again, last, where the tail of a long log shows them.
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) || { $(CURDIR)/scripts/ctest-failures .; exit 1; }

# The Python module (docs/python.md): builds it into $(BUILD)/python/trainsim and links ./trainsim to it
# (gitignored), so that `python3 -c "import trainsim"` works from the repository root.
python: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target trainsim_python
	ln -sfn $(BUILD)/python/trainsim trainsim

# Unit tests under AddressSanitizer + UndefinedBehaviorSanitizer, in their own build directory.
# Debug (asserts on) at -Og: the simulation-heavy tests run about 5x faster than at -O0, and files
# compile no slower (-O1 doubles their compile time under ASan); -g1 keeps function names and
# file:line in the sanitizers' stack traces and compiles faster than full -g.
ASAN_CXX_FLAGS ?= -Og -g1
# Tests whose subject is another program driven by trainsim's output (headless Chromium rendering its pages, PyTorch
# timing its kernel list) run in `make test`; under ASan they would re-run those programs only, for about a minute.
# A GoogleTest negative filter.
ASAN_SKIP ?= ProfileOpsCli.*:WebPageBrowser.*:*InHeadlessChromium*:*ThePageSubmitsTheDemoScenario*
# The test binaries run in shards of ~60 tests (scripts/run-gtest-shards), not one process per test as ctest starts
# them: a sanitized process start costs 0.1-0.2 s, and 1,500 of them took half of the tests' 400 s here.
test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="$(ASAN_CXX_FLAGS)" -DTRAINSIM_SANITIZE=ON -DTRAINSIM_BUILD_BENCH=OFF -DTRAINSIM_UNITY=$(UNITY)
	cmake --build build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 scripts/run-gtest-shards build-asan $(JOBS) '$(ASAN_SKIP)'

# The threaded code under ThreadSanitizer, in its own build directory: the explore tests (sweep and tune spread
# points over threads that share the NCCL search, communicator and kernel caches) and `validate`, which spreads
# cases over threads. Only these targets are built, to keep CI's time.
TSAN_CXX_FLAGS ?= -O1 -g1
TSAN_VALIDATE_CASES ?= $(wildcard ../shared/validation/cases/coll-*.yaml ../shared/validation/cases/mcore-*.yaml)
test-tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="$(TSAN_CXX_FLAGS)" -DTRAINSIM_TSAN=ON -DTRAINSIM_BUILD_BENCH=OFF -DTRAINSIM_UNITY=$(UNITY)
	cmake --build build-tsan -j $(JOBS) --target explore_tests service_tests trainsim
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ./explore_tests --gtest_brief=1
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ./service_tests --gtest_brief=1 --gtest_filter='JobState*:JobStore*:Serve.*'  # trainsim serve: workers, HTTP threads, the job store
	TSAN_OPTIONS=halt_on_error=1 build-tsan/trainsim run examples/gpt3-175b-256-gb200-nvl72.yaml --set simulation.threads=4 > /dev/null && echo "test-tsan: NVL72 run, its communicators built on 4 threads: no race"
	$(if $(TSAN_VALIDATE_CASES),TSAN_OPTIONS=halt_on_error=1 build-tsan/trainsim validate --threads 4 $(TSAN_VALIDATE_CASES) > /dev/null && echo "test-tsan: validate over $(words $(TSAN_VALIDATE_CASES)) cases on 4 threads: no race",@echo "test-tsan: ../shared/validation not beside the repo: validate not run under TSan")

bench: build
	bench/run-bench $(BUILD)

# tests/golden/<example>.json: the `run --json` output of every examples/*.yaml. Run it after an
# intended model change and commit tests/golden/; it prints every value that changed. `make test`
# fails while an example's output differs from its golden file (tests/cli/golden_cli_test.cpp).
golden: build
	scripts/golden $(BUILD)/trainsim

# The same comparison without writing: the changed JSON paths, old -> new; exit 1 if any.
golden-check: build
	scripts/golden --check $(BUILD)/trainsim

# Every generated accuracy artifact, from every public case (../shared/validation/cases and
# cases-next) and the project's own cases (validation/cases): docs/accuracy.md (then the hand-written
# docs/accuracy-discussion.md), docs/accuracy-own.md, docs/accuracy-attention-kernel.md and
# tests/accuracy/groups-recorded.json, the per-group record that `accuracy-check` compares against.
# Run it and commit the four files after a model change.
accuracy: build
	scripts/accuracy-docs $(BUILD)/trainsim docs --record tests/accuracy/groups-recorded.json

# docs/scenario-keys.md: every scenario key from src/scenario/key_table.cpp (a test fails when it is stale).
keys-docs: build
	$(BUILD)/trainsim keys --markdown > docs/scenario-keys.md

# CI: fails when a group's median |error| is more than 1 point above the record, a recorded group is
# gone or a case newly fails to simulate; prints the per-group table either way.
accuracy-check: build
	scripts/accuracy-check $(BUILD)/trainsim

# CI: fails when docs/accuracy*.md are not what `make accuracy` would write now.
accuracy-docs-check: build
	scripts/accuracy-docs-check $(BUILD)/trainsim

# Every tracked C++ file in the style of .clang-format (Debian 12's clang-format 14).
FORMAT_FILES = $(shell git ls-files '*.cpp' '*.hpp' '*.h' '*.cc')
format:
	clang-format -i $(FORMAT_FILES)

# CI: fails, listing the files, when any tracked C++ file differs from what `make format` writes.
format-check:
	@scripts/format-check

# clang-tidy with .clang-tidy over the given files (default: the sources changed since main's last
# commit). Its own build directory, configured without precompiled headers or unity batches (clang cannot read
# GCC's precompiled headers, and a batch is not a file of the tree); only the generated Chakra headers are built.
TIDY_FILES ?= $(shell git diff --name-only HEAD -- '*.cpp')
TIDY_BUILD ?= build-tidy
tidy:
	@if [ -z "$(strip $(TIDY_FILES))" ]; then echo "tidy: no changed .cpp files (TIDY_FILES=... to choose)"; exit 0; fi; \
	cmake -S . -B $(TIDY_BUILD) -DCMAKE_BUILD_TYPE=Debug -DTRAINSIM_PCH=OFF -DTRAINSIM_UNITY=OFF -DTRAINSIM_BUILD_BENCH=OFF > /dev/null && \
	cmake --build $(TIDY_BUILD) --target trainsim_chakra_proto > /dev/null && \
	clang-tidy -p $(TIDY_BUILD) --quiet --extra-arg=-Wno-unknown-warning-option $(TIDY_FILES)

clean:
	rm -rf $(BUILD) build-asan build-tsan $(TIDY_BUILD)

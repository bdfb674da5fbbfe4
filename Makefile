# Kiln's two entry points on a fresh Debian 12 machine:
#   make demo   installs what is missing, builds, runs a bundled model and prints its evidence
#   make test   installs what is missing, builds, exports the parity models, runs every test
BUILD_DIR ?= build
JOBS ?= 2
PYTHON := /usr/bin/python3
KILN := $(BUILD_DIR)/kiln
DEMO_MODEL := examples/squeezenet/model.onnx
DEMO_INPUT := examples/squeezenet/input.npy

.PHONY: all deps build test demo models clean

all: build

deps:
	./scripts/install-deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DKILN_WERROR=ON

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j$(JOBS)

# Reduced-depth PyTorch exports with reference inputs and outputs for the parity tests.
$(BUILD_DIR)/models/.exported: bench/models/export.py
	OMP_WAIT_POLICY=PASSIVE $(PYTHON) bench/models/export.py --variant test --out $(BUILD_DIR)/models
	touch $@

models: deps $(BUILD_DIR)/models/.exported

test: build models
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

demo: build
	$(KILN) inspect $(DEMO_MODEL)
	$(KILN) run $(DEMO_MODEL) --input $$($(PYTHON) -c "import json;print(json.load(open('examples/squeezenet/meta.json'))['inputs'][0]['name'])")=$(DEMO_INPUT) \
	  --output-dir $(BUILD_DIR)/demo --report $(BUILD_DIR)/demo/report.json --iterations 5

clean:
	rm -rf $(BUILD_DIR)

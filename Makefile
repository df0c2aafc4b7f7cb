# plugsdk: the two commands (`make demo`, `make test`) and the longer jobs.
# Everything runs inside the toolbox (tools/toolbox: a Debian trixie root with every
# dependency), which is created on first use.
SANITIZE ?= 0
# make demo runs the demo model on the cpu plugin; BACKEND=NAME picks another (e.g. minimal).
BACKEND ?= cpu
ifeq ($(SANITIZE),1)
BUILD_DIR ?= build-sanitize
else
BUILD_DIR ?= build
endif
TOOLBOX := tools/toolbox
export PLUGSDK_BUILD_DIR := $(CURDIR)/$(BUILD_DIR)
export SANITIZE

.PHONY: all build demo test bench bench-models bench-training lint format fuzz toolbox shell clean

all: build

toolbox:
	$(TOOLBOX) ensure

build: toolbox
	$(TOOLBOX) run tools/build.sh

demo: build
	$(TOOLBOX) run env BACKEND=$(BACKEND) LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libsleef.so.3 tools/demo.sh

test: toolbox
	$(TOOLBOX) run tools/run_tests.sh

# The CPU backend against eager torch and inductor (tools/bench.py): a table, and
# $(BUILD_DIR)/bench.json. BENCH_ARGS="--only mlp" picks workloads. Inductor is vectorized
# only with libsleef preloaded (DESIGN.md).
bench: build
	$(TOOLBOX) run env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libsleef.so.3 python3 tools/bench.py $(BENCH_ARGS)

# torch.compile(backend="plugsdk") per model against eager and inductor (tools/bench_models.py):
# run and compile times (cold, warm), in a table and $(BUILD_DIR)/bench_models.json.
bench-models: build
	$(TOOLBOX) run env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libsleef.so.3 python3 tools/bench_models.py $(BENCH_ARGS)

# One training step per model (the core's autograd) against eager and inductor
# (tools/bench_training.py): step times, first-step (compile) times, the joint graph's build
# time and the saved bytes, in a table and $(BUILD_DIR)/bench_training.json.
bench-training: build
	$(TOOLBOX) run env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libsleef.so.3 python3 tools/bench_training.py $(BENCH_ARGS)

lint: toolbox
	$(TOOLBOX) run tools/lint.sh

format: toolbox
	$(TOOLBOX) run tools/lint.sh --fix

# libFuzzer target for the .pgraph parser: FUZZ_SECONDS (default 60).
fuzz: toolbox
	$(TOOLBOX) run tools/fuzz.sh

shell: toolbox
	$(TOOLBOX) shell

clean:
	rm -rf build build-sanitize build-fuzz

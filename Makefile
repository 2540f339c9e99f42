# seqby: the two quick-start commands are `make run` and `make test` (see README.md).
# Every target installs what it needs first (`make deps`, a fast no-op once everything is there),
# then builds into build/ with CMake. Nothing here depends on anything outside Debian 12 packages.

BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SEEDS ?= 0..299

# Every Debian package the build, the tests and the default campaign need (README.md says why).
DEBIAN_PACKAGES := build-essential cmake git pkg-config libgtest-dev libgmock-dev \
  libbenchmark-dev librapidcheck-dev libhiredis-dev nlohmann-json3-dev liblua5.1-0-dev \
  libcli11-dev redis-server jq clang-format python3 \
  prometheus-cpp-dev libcivetweb-dev chromium clang libclang-rt-14-dev libtcmalloc-minimal4

.PHONY: all deps configure build run test bench install clean format

# The CMake-generated sub-makes would otherwise print every directory they enter and leave.
MAKEFLAGS += --no-print-directory

all: build

deps:
	@scripts/deps $(DEBIAN_PACKAGES)

$(BUILD_DIR)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

configure: $(BUILD_DIR)/CMakeCache.txt

build: configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

# The newcomer's first command builds only what it runs: the seqby command, not every test and
# benchmark first (`make test` builds those).
run: configure
	cmake --build $(BUILD_DIR) --target seqby -j$(JOBS)
	$(BUILD_DIR)/seqby sim --seeds $(SEEDS) --jobs $(JOBS)

test: build
	@scripts/run-tests $(BUILD_DIR)

bench: build
	@scripts/run-bench $(BUILD_DIR)

# The library (component seqby_dev) and the seqby command; the test fixtures (seqby_testing) only
# with `cmake --install build --component seqby_testing`.
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX) --component seqby_dev
	cmake --install $(BUILD_DIR) --prefix $(PREFIX) --component Unspecified

# Mutation testing (README.md "Mutation testing"), never part of make test: each bug of
# mutate/catalog.txt planted in turn in a scratch copy under /tmp, the suites run on it; the
# table is also written to $(BUILD_DIR)/mutate.md. MUTATE_ARGS="--only ID,ID" runs a few.
MUTATE_ARGS ?=
.PHONY: mutate
mutate: deps
	@mkdir -p $(BUILD_DIR)
	scripts/mutate --jobs $(JOBS) --markdown $(BUILD_DIR)/mutate.md $(MUTATE_ARGS)

format: deps
	@scripts/check-format --fix

clean:
	rm -rf $(BUILD_DIR)

# libFuzzer targets (README.md "Fuzzing"; clang and libclang-rt-14-dev): every library and target
# compiled by clang with -fsanitize=fuzzer-no-link,address,undefined in $(FUZZ_BUILD_DIR), then each
# target run for FUZZ_SECONDS over its committed corpus fuzz/corpus/<name>/ (make test replays
# those corpora with the ordinary build).
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 600
.PHONY: fuzz
fuzz: deps
	CXX=clang++ cmake -S . -B $(FUZZ_BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DSEQBY_FUZZ=ON
	cmake --build $(FUZZ_BUILD_DIR) -j$(JOBS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run-fuzzers $(FUZZ_BUILD_DIR)

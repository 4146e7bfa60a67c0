# The two commands of the README, plus the pieces they are made of.
#   make demo   deps + build + the multi-cluster demo (three clusters, gateways)
#   make test   deps + sanitizer build + the whole suite through ctest
#   make install  build, then copy the programs under $(PREFIX) (default /usr/local)
#   make fuzz   the libFuzzer harnesses, FUZZ_SECONDS each (FUZZ=fuzz_ec_api: that one)
BUILD      ?= build
TEST_BUILD ?= build-test
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 600
FUZZ       ?=
JOBS       ?= $(shell nproc)
PREFIX     ?= /usr/local

.PHONY: all deps build install demo demo-single test bench clean format fuzz fuzz-build

all: build

deps:
	@bash deploy/deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# xgate, gatewayd, edgeclusterd to $(PREFIX)/bin; deploy/edge/attach.sh to
# $(PREFIX)/lib/xgate; cli.md and user-guide.md to $(PREFIX)/share/doc/xgate
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

demo: build
	bash deploy/demo.sh $(BUILD)

demo-single: build
	bash deploy/demo_single.sh $(BUILD)/userspace/xgate

# The suite's "fuzz" test runs the harnesses of the clang tree for 20 s each.
test: deps fuzz-build
	cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DXGATE_SANITIZE=ON -DXGATE_BENCH=OFF \
		-DXGATE_FUZZ_BUILD=$(abspath $(FUZZ_BUILD)) >/dev/null
	cmake --build $(TEST_BUILD) -j $(JOBS)
	cd $(TEST_BUILD) && ctest --output-on-failure --timeout 900

# A second tree, clang only: coverage + ASan + UBSan on every library.
fuzz-build: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DXGATE_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all

fuzz: fuzz-build
	bash tests/fuzz/run.sh -t $(FUZZ_SECONDS) -r 0 -o $(FUZZ_BUILD)/fuzz-out $(FUZZ_BUILD)/tests/fuzz $(FUZZ)

bench: build
	cmake --build $(BUILD) --target bench_xdp_cost
	cmake --build $(BUILD) --target bench_pps_veth
	cmake --build $(BUILD) --target bench_mesh_converge
	cmake --build $(BUILD) --target bench_cross_cluster
	cmake --build $(BUILD) --target bench_mission_tree

format:
	clang-format -i bpf/*.c bpf/lib/*.h bpf/include/*.h userspace/*/*.[ch] control/*/*.[ch] tests/fixtures/*.[ch] tests/unit/*.[ch] tests/fuzz/*.[ch] bench/*.[ch] bench/tree/*.[ch]

clean:
	rm -rf $(BUILD) $(TEST_BUILD) $(FUZZ_BUILD)

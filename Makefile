# The two commands of the README, plus the pieces they are made of.
#   make demo   deps + build + the multi-cluster demo (three clusters, gateways)
#   make test   deps + sanitizer build + the whole suite through ctest
#   make install  build, then copy the programs under $(PREFIX) (default /usr/local)
BUILD      ?= build
TEST_BUILD ?= build-test
JOBS       ?= $(shell nproc)
PREFIX     ?= /usr/local

.PHONY: all deps build install demo demo-single test bench clean format

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

test: deps
	cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DXGATE_SANITIZE=ON -DXGATE_BENCH=OFF >/dev/null
	cmake --build $(TEST_BUILD) -j $(JOBS)
	cd $(TEST_BUILD) && ctest --output-on-failure --timeout 900

bench: build
	cmake --build $(BUILD) --target bench_xdp_cost
	cmake --build $(BUILD) --target bench_pps_veth
	cmake --build $(BUILD) --target bench_mesh_converge
	cmake --build $(BUILD) --target bench_cross_cluster
	cmake --build $(BUILD) --target bench_mission_tree

format:
	clang-format -i bpf/*.c bpf/lib/*.h bpf/include/*.h userspace/*/*.[ch] control/*/*.[ch] tests/fixtures/*.[ch] tests/unit/*.[ch] bench/*.[ch] bench/tree/*.[ch]

clean:
	rm -rf $(BUILD) $(TEST_BUILD)

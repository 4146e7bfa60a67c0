# ---- pps_veth: 64-byte packets/s through one transit hop, xgate vs kernel ----
# Included from bench/CMakeLists.txt. pps_gen is the traffic generator (and
# the tc sink) bench/pps_veth.sh drives; see docs/bench.md "pps_veth".
add_executable(pps_gen ${CMAKE_CURRENT_LIST_DIR}/pps/pps_gen.c)
target_include_directories(pps_gen PRIVATE ${PROJECT_SOURCE_DIR}/tests/fixtures) # pkt.h
target_link_libraries(pps_gen PRIVATE PkgConfig::LIBBPF)

# Builds two topologies in namespaces (xgb*, xgk*), measures, removes them.
# Options for the script: PPS_ARGS, e.g. cmake -DPPS_ARGS="--secs 5 --runs 3".
xgate_bench_script(pps_veth pps_veth.sh 600 PPS_ARGS
  "pps_veth: 64-byte UDP packets/s through one transit hop, xgate vs kernel VXLAN"
  xgate pps_gen)

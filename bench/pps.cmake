# ---- pps_veth: 64-byte packets/s through one transit hop, xgate vs kernel ----
# Included from bench/CMakeLists.txt. pps_gen is the traffic generator (and
# the tc sink) bench/pps_veth.sh drives; see docs/bench.md "pps_veth".
add_executable(pps_gen ${CMAKE_CURRENT_LIST_DIR}/pps/pps_gen.c)
target_link_libraries(pps_gen PRIVATE PkgConfig::LIBBPF)

# Builds two topologies in namespaces (xgb*, xgk*), measures, removes them.
# Options for the script: PPS_ARGS, e.g. cmake -DPPS_ARGS="--secs 5 --runs 3".
set(PPS_ARGS "" CACHE STRING "extra options for bench/pps_veth.sh")
separate_arguments(_pps_args UNIX_COMMAND "${PPS_ARGS}")
add_custom_target(bench_pps_veth
  COMMAND timeout 600 ${CMAKE_CURRENT_LIST_DIR}/pps_veth.sh ${_pps_args}
          $<TARGET_FILE:xgate> $<TARGET_FILE:pps_gen>
  DEPENDS xgate pps_gen
  USES_TERMINAL
  COMMENT "pps_veth: 64-byte UDP packets/s through one transit hop, xgate vs kernel VXLAN")

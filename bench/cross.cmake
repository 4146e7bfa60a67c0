# ---- cross_cluster: pod to pod across two clusters, xgate gateways vs kernel ----
# Included from bench/CMakeLists.txt (after pps.cmake: it uses pps_gen). Builds
# deploy/lib/mtopo.sh's three clusters twice in namespaces (xcx-*: xgate with
# its gatewayd mesh, xck-*: the kernel's VXLAN and routing), measures 64-byte
# pps and iperf3 TCP between the same two pods, removes everything; see
# docs/bench.md "cross_cluster". Needs root.
# Options for the script: CROSS_ARGS, e.g. cmake -DCROSS_ARGS="--secs 5 --runs 3".
set(CROSS_ARGS "" CACHE STRING "extra options for bench/cross_cluster.sh")
separate_arguments(_cross_args UNIX_COMMAND "${CROSS_ARGS}")
add_custom_target(bench_cross_cluster
  COMMAND timeout 900 ${CMAKE_CURRENT_LIST_DIR}/cross_cluster.sh ${_cross_args}
          $<TARGET_FILE:xgate> $<TARGET_FILE:gatewayd> $<TARGET_FILE:pps_gen>
  DEPENDS xgate gatewayd pps_gen
  USES_TERMINAL
  COMMENT "cross_cluster: pod-to-pod pps and TCP across two clusters, xgate gateways vs kernel VXLAN")

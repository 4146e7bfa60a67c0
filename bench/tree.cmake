# ---- mission_tree: edgeclusterd trees on loopback ----
# Included from bench/CMakeLists.txt. tree_probe creates missions at the
# root and watches every cluster's HTTP API (http, or https with OpenSSL)
# for bench/mission_tree.sh; see docs/bench.md "mission_tree". No root
# needed: daemons on 127.0.0.1 only.
pkg_check_modules(OPENSSL REQUIRED IMPORTED_TARGET libssl libcrypto)
find_package(Threads REQUIRED)
add_executable(tree_probe
  ${CMAKE_CURRENT_LIST_DIR}/tree/tree_probe.c ${CMAKE_CURRENT_LIST_DIR}/tree/http.c
  ${CMAKE_CURRENT_LIST_DIR}/tree/util.c ${CMAKE_CURRENT_LIST_DIR}/tree/latency.c
  ${CMAKE_CURRENT_LIST_DIR}/tree/scale.c)
target_link_libraries(tree_probe PRIVATE ctl_base PkgConfig::JANSSON PkgConfig::OPENSSL m Threads::Threads)

# Options for the script: TREE_ARGS, e.g. cmake -DTREE_ARGS="--clusters 50 --wss".
xgate_bench_script(mission_tree mission_tree.sh 1800 TREE_ARGS
  "mission_tree: edgeclusterd mission latency to depth 4, 100 clusters x 1000 missions, RSS"
  edgeclusterd tree_probe)

# Two roots on three etcd members, children attached: failover times over
# kills -9 of the leading root with a 1 s and a 3 s lease, acknowledged
# missions lost (must be 0); see docs/bench.md "edge_failover". Options:
# EDGE_FAILOVER_ARGS, e.g. cmake -DEDGE_FAILOVER_ARGS="--kills 5 --ttls 1".
xgate_bench_script(edge_failover edge_failover.sh 1800 EDGE_FAILOVER_ARGS
  "edge_failover: root kill -9 -> standby leads, mission 201, children's state up; p50/p99"
  edgeclusterd)

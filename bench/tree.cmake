# ---- mission_tree: edgeclusterd trees on loopback (issue 4, section 6) ----
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
target_link_libraries(tree_probe PRIVATE PkgConfig::JANSSON PkgConfig::OPENSSL m Threads::Threads)

# Options for the script: TREE_ARGS, e.g. cmake -DTREE_ARGS="--clusters 50 --wss".
set(TREE_ARGS "" CACHE STRING "extra options for bench/mission_tree.sh")
separate_arguments(_tree_args UNIX_COMMAND "${TREE_ARGS}")
add_custom_target(bench_mission_tree
  COMMAND timeout 1800 ${CMAKE_CURRENT_LIST_DIR}/mission_tree.sh ${_tree_args}
          $<TARGET_FILE:edgeclusterd> $<TARGET_FILE:tree_probe>
  DEPENDS edgeclusterd tree_probe
  USES_TERMINAL
  COMMENT "mission_tree: edgeclusterd mission latency to depth 4, 100 clusters x 1000 missions, RSS")

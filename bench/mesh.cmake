# ---- mesh_converge: gatewayd full mesh on loopback, N = 10, 50, 100 ----
# Included from bench/CMakeLists.txt. mesh_probe polls every gatewayd's
# control socket in parallel for bench/mesh_converge.sh; see docs/bench.md
# "mesh_converge". No root needed: daemons, 127.0.0.1 and unix sockets only.
add_executable(mesh_probe ${CMAKE_CURRENT_LIST_DIR}/mesh/mesh_probe.c)
target_link_libraries(mesh_probe PRIVATE PkgConfig::JANSSON)

# Options for the script: MESH_ARGS, e.g. cmake -DMESH_ARGS="--sizes '10 50'".
set(MESH_ARGS "" CACHE STRING "extra options for bench/mesh_converge.sh")
separate_arguments(_mesh_args UNIX_COMMAND "${MESH_ARGS}")
add_custom_target(bench_mesh_converge
  COMMAND timeout 900 ${CMAKE_CURRENT_LIST_DIR}/mesh_converge.sh ${_mesh_args}
          $<TARGET_FILE:gatewayd> $<TARGET_FILE:xgate> $<TARGET_FILE:mesh_probe>
  DEPENDS gatewayd xgate mesh_probe
  USES_TERMINAL
  COMMENT "mesh_converge: gatewayd full-mesh convergence and propagation times")

# ---- mesh_converge: gatewayd full mesh on loopback, N = 10, 50, 100 ----
# Included from bench/CMakeLists.txt. mesh_probe polls every gatewayd's
# control socket in parallel for bench/mesh_converge.sh; see docs/bench.md
# "mesh_converge". No root needed: daemons, 127.0.0.1 and unix sockets only.
add_executable(mesh_probe ${CMAKE_CURRENT_LIST_DIR}/mesh/mesh_probe.c)
target_link_libraries(mesh_probe PRIVATE PkgConfig::JANSSON)

# Options for the script: MESH_ARGS, e.g. cmake -DMESH_ARGS="--sizes '10 50'".
xgate_bench_script(mesh_converge mesh_converge.sh 900 MESH_ARGS
  "mesh_converge: gatewayd full-mesh convergence and propagation times"
  gatewayd xgate mesh_probe)

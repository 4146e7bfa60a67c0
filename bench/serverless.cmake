# ---- session_open: fornaxd's session opens and pod placements ----
# Included from bench/CMakeLists.txt. fx_probe drives a fornaxd over its
# API and its node link (simulated node agents in the probe, or real
# nodeagentds); see docs/bench.md "session_open".
add_executable(fx_probe
  ${CMAKE_CURRENT_LIST_DIR}/serverless/fx_probe.c ${CMAKE_CURRENT_LIST_DIR}/serverless/api.c
  ${CMAKE_CURRENT_LIST_DIR}/serverless/sim_nodes.c)
target_link_libraries(fx_probe PRIVATE ctl_loop PkgConfig::JANSSON PkgConfig::LWS m)

# Options for the script: SESSION_OPEN_ARGS, e.g. cmake -DSESSION_OPEN_ARGS="--nodes 50".
xgate_bench_script(session_open session_open.sh 900 SESSION_OPEN_ARGS
  "session_open: fornaxd placements/s, session opens/s and p99, RSS (simulated nodes)"
  fornaxd fx_probe)

# The same opens against real pods: fornaxd and one nodeagentd on namespaces
# of this host (needs root); see docs/bench.md "session_open".
xgate_bench_script(session_open_real session_open_real.sh 900 SESSION_OPEN_REAL_ARGS
  "session_open_real: warm and cold opens of real pods, nodeagentd's footprint"
  xgate fornaxd nodeagentd fornax-echo fx_probe)

# Active/standby fornaxd on three etcd members: failover time over kills of
# the leader, sessions lost (must be 0), the standby's watch lag; see
# docs/bench.md "fornax_failover".
xgate_bench_script(fornax_failover fornax_failover.sh 900 FORNAX_FAILOVER_ARGS
  "fornax_failover: leader kill -9 -> new session Available, p50/p99; watch lag; etcd vs SQLite opens/s, creates/s"
  fornaxd fx_probe)

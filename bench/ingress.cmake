# ---- ingress: session ingress, xgate vs nftables DNAT (conntrack) ----------
# Included from bench/CMakeLists.txt. sess_fill puts N sessions into an
# instance through libxgate (scale and churn rows); see docs/bench.md
# "ingress". Options for the script: INGRESS_ARGS, e.g.
# cmake -DINGRESS_ARGS="--secs 5 --runs 3".
add_executable(sess_fill ${CMAKE_CURRENT_LIST_DIR}/ingress/sess_fill.c)
target_link_libraries(sess_fill PRIVATE xgate_core)
xgate_bench_script(ingress ingress.sh 900 INGRESS_ARGS
  "ingress: session ingress, xgate XDP vs nftables DNAT with conntrack"
  xgate pps_gen sess_fill)

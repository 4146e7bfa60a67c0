# ---- cross_cluster: pod to pod across two clusters, xgate gateways vs kernel ----
# Included from bench/CMakeLists.txt (after pps.cmake: it uses pps_gen). Builds
# deploy/lib/mtopo.sh's three clusters four times in namespaces (xcx-*: xgate
# in auth mode, xce-*: xgate in encrypt mode with xgate-cryptd, xck-*: the
# kernel's VXLAN and routing, xcw-*: the same with WireGuard between the
# gateways), measures 64-byte pps and iperf3 TCP between the same two pods,
# removes everything; see docs/bench.md "cross_cluster". Needs root.
# Options for the script: CROSS_ARGS, e.g. cmake -DCROSS_ARGS="--secs 5 --runs 3"
# (--no-encrypt, --no-wg, --no-variant leave paths out).
xgate_bench_script(cross_cluster cross_cluster.sh 900 CROSS_ARGS
  "cross_cluster: pod-to-pod pps and TCP across two clusters: xgate auth and encrypt, kernel VXLAN, WireGuard"
  xgate gatewayd pps_gen)
# found by the script next to gatewayd and pps_gen, not passed
add_dependencies(bench_cross_cluster xgate-cryptd tun_aead)

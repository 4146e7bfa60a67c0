# ---- cross_cluster: pod to pod across two clusters, xgate gateways vs kernel ----
# Included from bench/CMakeLists.txt (after pps.cmake: it uses pps_gen). Builds
# deploy/lib/mtopo.sh's three clusters twice in namespaces (xcx-*: xgate with
# its gatewayd mesh, xck-*: the kernel's VXLAN and routing), measures 64-byte
# pps and iperf3 TCP between the same two pods, removes everything; see
# docs/bench.md "cross_cluster". Needs root.
# Options for the script: CROSS_ARGS, e.g. cmake -DCROSS_ARGS="--secs 5 --runs 3" (or
# "--encrypt": the gateways in encrypt mode, xgate-cryptd on the data path).
xgate_bench_script(cross_cluster cross_cluster.sh 900 CROSS_ARGS
  "cross_cluster: pod-to-pod pps and TCP across two clusters, xgate gateways vs kernel VXLAN"
  xgate gatewayd xgate-cryptd pps_gen)

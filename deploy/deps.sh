#!/usr/bin/env bash
# Installs every Debian package that the build, tests, demo and benches need.
# Idempotent and quick when everything is present: apt is only called for what is missing.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config git
  clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev linux-libc-dev
  libxdp-dev xdp-tools
  libsodium-dev libmnl-dev libsqlite3-dev libwebsockets-dev libjansson-dev
  libclang-rt-14-dev
  iproute2 iputils-ping ethtool iperf3 tshark python3 python3-scapy
  python3-websockets python3-cryptography
  procps psmisc netcat-openbsd wireguard-tools wireguard-go nftables conntrack
  curl jq openssl libssl-dev
  # cross_cluster's profiled window: where the crypto workers' CPU goes
  linux-perf
  kubernetes-client
  # fornaxd's store on etcd (3.4) and the throwaway clusters of its tests;
  # libcurl speaks etcd's JSON gateway (Debian packages no C client for etcd)
  etcd-server etcd-client libcurl4-openssl-dev
)

if [ "$(id -u)" -ne 0 ]; then
  echo "deploy/deps.sh: must run as root (installs Debian packages)" >&2
  exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# kubernetes-client is kubectl 1.20, the client the edge_kubectl test drives.
# Another package may own /usr/bin/kubectl (the Google Cloud SDK's "kubectl"):
# then dpkg would refuse to overwrite it. A diversion that spares only that
# owner puts Debian's at /usr/bin/kubectl.kubernetes-client and leaves the
# other one in place (tests/edge/kubectl.sh looks there too).
kube_owner=$(dpkg-query -S /usr/bin/kubectl 2>/dev/null | grep -v '^diversion' | cut -d: -f1 || true)
if [ -n "$kube_owner" ] && [ "$kube_owner" != kubernetes-client ] &&
   ! dpkg-divert --list /usr/bin/kubectl | grep -q .; then
  dpkg-divert --package "$kube_owner" --divert /usr/bin/kubectl.kubernetes-client \
    --no-rename --add /usr/bin/kubectl
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture; answer it up front.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# bpffs is where xgate pins its maps; some minimal systems do not mount it.
if ! mountpoint -q /sys/fs/bpf; then
  mount -t bpf bpf /sys/fs/bpf
fi

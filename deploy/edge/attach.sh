#!/bin/sh
# edgeclusterd's attach step for the Kubernetes distros ([Cluster] InstallScript and
# UninstallScript): called as  attach.sh install|uninstall DISTRO CLUSTER PARENT-URL
# Idempotent: the attach state machine runs it again after a crash.
#   install:   the namespace xgate-edge, labelled with the cluster and its parent
#   uninstall: that namespace goes (and whatever missions left in it)
# KUBECTL and KUBECONFIG come from the environment (default: kubectl; k3s: k3s kubectl).
set -eu
op=${1:?install|uninstall}
distro=${2:?distro}
cluster=${3:?cluster name}
parent=${4:-}
case $distro in
none) exit 0 ;; # nothing to install: the daemon records the phase
k3s) kubectl=${KUBECTL:-"k3s kubectl"} ;;
k8s | arktos) kubectl=${KUBECTL:-kubectl} ;;
*) echo "attach.sh: unknown distro '$distro'" >&2; exit 2 ;;
esac
case $op in
install)
	host=$(echo "$parent" | sed -e 's|^[a-z]*://||' -e 's|[:/].*||')
	$kubectl apply -f - <<EOT
apiVersion: v1
kind: Namespace
metadata:
  name: xgate-edge
  labels:
    edge.xgate.io/cluster: "$cluster"
    edge.xgate.io/parent: "$host"
EOT
	;;
uninstall)
	$kubectl delete namespace xgate-edge --ignore-not-found
	;;
*) echo "attach.sh: install or uninstall, not '$op'" >&2; exit 2 ;;
esac

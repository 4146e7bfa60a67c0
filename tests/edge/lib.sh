#!/usr/bin/env bash
# What the edgeclusterd shell tests share (sourced after ../lib.sh).

# free_port (deploy/lib/port.sh)
# shellcheck source=../../deploy/lib/port.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/port.sh"
# secret PREFIX: PREFIX-<32 random hex digits>, for API tokens and join tokens
secret() { echo "$1-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }
# test_ca DIR: a throw-away CA and a certificate for localhost (deploy/lib/ca.sh)
# shellcheck source=../../deploy/lib/ca.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/ca.sh"

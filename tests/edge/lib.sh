#!/usr/bin/env bash
# What the edgeclusterd shell tests share (sourced after ../lib.sh).

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# secret PREFIX: PREFIX-<32 random hex digits>, for API tokens and join tokens
secret() { echo "$1-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }
# test_ca DIR: a throw-away CA and a certificate for localhost (deploy/lib/ca.sh)
# shellcheck source=../../deploy/lib/ca.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/ca.sh"

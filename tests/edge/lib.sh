#!/usr/bin/env bash
# What the edgeclusterd shell tests share (sourced after ../lib.sh).

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# secret PREFIX: PREFIX-<32 random hex digits>, for API tokens and join tokens
secret() { echo "$1-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }
# test_ca DIR: a throw-away CA (DIR/ca.pem) and a certificate it signed for
# localhost and 127.0.0.1 (DIR/srv.pem, DIR/srv.key)
test_ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=xgate test CA" \
		-keyout "$1/ca.key" -out "$1/ca.pem" 2>/dev/null &&
		openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$1/srv.key" \
			-out "$1/srv.csr" 2>/dev/null &&
		printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$1/ext" &&
		openssl x509 -req -in "$1/srv.csr" -CA "$1/ca.pem" -CAkey "$1/ca.key" -CAcreateserial \
			-days 2 -extfile "$1/ext" -out "$1/srv.pem" 2>/dev/null
}

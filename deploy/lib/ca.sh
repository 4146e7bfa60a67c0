#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# test_ca DIR [CN [SAN [ec]]]: a throw-away CA (DIR/ca.pem, DIR/ca.key) and a
# certificate it signed for localhost and 127.0.0.1 (DIR/srv.pem, DIR/srv.key),
# valid two days; for the edgeclusterd tests and bench/mission_tree's wss
# chain. SAN adds names to the certificate ("IP:10.77.0.1,DNS:core") for a
# server off loopback; "ec" gives the server a P-256 key instead of RSA-2048
# (a much cheaper signature per handshake: for benchmarks of many handshakes).
test_ca() {
	local key="rsa:2048"
	[ "${4:-}" = ec ] && key="ec -pkeyopt ec_paramgen_curve:prime256v1"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=${2:-xgate test CA}" \
		-keyout "$1/ca.key" -out "$1/ca.pem" 2>/dev/null &&
		openssl req -newkey $key -nodes -subj "/CN=localhost" -keyout "$1/srv.key" \
			-out "$1/srv.csr" 2>/dev/null &&
		printf 'subjectAltName=DNS:localhost,IP:127.0.0.1%s\n' "${3:+,$3}" > "$1/ext" &&
		openssl x509 -req -in "$1/srv.csr" -CA "$1/ca.pem" -CAkey "$1/ca.key" -CAcreateserial \
			-days 2 -extfile "$1/ext" -out "$1/srv.pem" 2>/dev/null
}

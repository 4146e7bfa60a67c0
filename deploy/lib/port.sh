#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# free_port: a TCP port on 127.0.0.1 that nobody listens on now (the kernel
# picks it; another process may still take it before the caller does), for
# the demo's daemons and the tests'.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

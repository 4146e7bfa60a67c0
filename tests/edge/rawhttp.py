#!/usr/bin/env python3
"""An HTTP peer that sends exactly the bytes it is given, for requests curl
will not make (CONNECT, unknown methods, malformed header lines, bodies that
never end). Prints what the server sent back, then one last line:
"<EOF>" if the server closed the connection, "<IDLE>" if it sent nothing for
--idle seconds and kept it open.

usage: rawhttp.py PORT [--idle S] [--hold] < request-bytes
  --hold  send the request, then keep the connection open without sending
          more (a client that never finishes its request)
"""
import socket
import sys


def main():
    port = int(sys.argv[1])
    idle = 3.0
    if "--idle" in sys.argv:
        idle = float(sys.argv[sys.argv.index("--idle") + 1])
    data = sys.stdin.buffer.read()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(data)
    s.settimeout(idle)
    out = b""
    end = "<IDLE>"
    while True:
        try:
            b = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            end = "<EOF>"
            break
        if not b:
            end = "<EOF>"
            break
        out += b
    sys.stdout.buffer.write(out)
    sys.stdout.write("\n" + end + "\n")
    s.close()


main()

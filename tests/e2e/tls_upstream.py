"""An HTTPS server standing in for a non-Cursor service on the test address (netns tests only).

    python tls_upstream.py ADDRESS PORT NAME CERT_OUT

Makes a self-signed certificate for NAME, writes it to CERT_OUT (so the client can trust exactly
this server), answers every GET with "upstream NAME" and prints "ready" once listening.
"""

from __future__ import annotations

import http.server
import ssl
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: find fakes

from fakes.certs import self_signed


def main() -> None:
    address, port, name, cert_out = sys.argv[1], int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
    cert, key = self_signed(name)
    cert_out.write_bytes(cert)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "key.pem").write_bytes(key)
        context.load_cert_chain(cert_out, Path(tmp) / "key.pem")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = f"upstream {name}".encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer((address, port), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

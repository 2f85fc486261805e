"""Helpers for the page-fetcher tests: a real HTTP server on loopback, a guard that fails any
connection outside 127.0.0.0/8, test settings, and a PDF writer with a real text layer."""

from __future__ import annotations

import ipaddress
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpcore
import pytest

from websearch_mcp.config import FetchSettings

LOOPBACK = ipaddress.ip_network("127.0.0.0/8")

Handler = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class Seen:
    """One request as the test server received it."""

    path: str
    headers: dict[str, str]


@dataclass
class LocalServer:
    """A threaded HTTP/1.0 server on a loopback address with per-path handlers.

    A route key ending in `*` matches every path with that prefix.
    """

    host: str = "127.0.0.1"
    tls: ssl.SSLContext | None = None
    routes: dict[str, Handler] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    def __enter__(self) -> LocalServer:
        owner = self

        class _Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}))
                route = owner.route_for(self.path)
                if route is None:
                    send(self, 404, b"not found", "text/plain")
                else:
                    route(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer((self.host, 0), _Handler)
        if self.tls is not None:
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    def url(self, path: str, host: str | None = None) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{host or self.host}:{self.port}{path}"

    def route_for(self, path: str) -> Handler | None:
        if path in self.routes:
            return self.routes[path]
        for key, handler in self.routes.items():
            if key.endswith("*") and path.startswith(key[:-1]):
                return handler
        return None

    def paths(self) -> list[str]:
        return [s.path for s in self.seen]


def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    content_type: str | None,
    headers: dict[str, str] | None = None,
) -> None:
    """A complete response with Content-Length."""
    handler.send_response(status)
    if content_type:
        handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def page(body: bytes | str, content_type: str | None = "text/html; charset=utf-8") -> Handler:
    data = body.encode() if isinstance(body, str) else body
    return lambda h: send(h, 200, data, content_type)


def redirect(location: str, status: int = 302) -> Handler:
    return lambda h: send(h, status, b"", "text/plain", {"Location": location})


def settings_for(*servers: LocalServer, **overrides: Any) -> FetchSettings:
    """Settings that open loopback and the servers' ports, with short timeouts."""
    values: dict[str, Any] = {
        "allow_networks": ["127.0.0.0/8"],
        "allowed_ports": [s.port for s in servers] or [80, 443],
        "timeout_seconds": 5.0,
        "connect_timeout_seconds": 2.0,
    }
    values.update(overrides)
    return FetchSettings(**values)


def install_connection_guard(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Record every TCP connection the fetcher opens and fail any that would leave loopback.

    The fetcher's network backend connects through `httpcore.AnyIOBackend`; patching it here
    proves refusals happen before connecting and that only checked addresses are dialled.
    """
    opened: list[tuple[str, int]] = []
    original = httpcore.AnyIOBackend.connect_tcp

    async def guarded(self: httpcore.AnyIOBackend, host: str, port: int, *args: Any, **kw: Any):
        opened.append((host, port))
        if ipaddress.ip_address(host) not in LOOPBACK:
            raise AssertionError(f"the fetcher tried to connect to {host}")
        return await original(self, host, port, *args, **kw)

    monkeypatch.setattr(httpcore.AnyIOBackend, "connect_tcp", guarded)
    return opened


def wait_for(predicate: Callable[[], bool], timeout: float = 3.0) -> bool:
    """Poll until `predicate()` holds or the time is up (server threads finish asynchronously)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def _to_unicode_cmap(mapping: dict[str, str]) -> str:
    """A ToUnicode CMap mapping each one-byte character code to the given UTF-16 code units
    (hex), which need not make whole characters: broken PDFs map surrogate halves alone."""
    chars = " ".join(f"<{ord(code):02X}> <{units}>" for code, units in mapping.items())
    return (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Test def"
        " /CMapType 2 def 1 begincodespacerange <00> <FF> endcodespacerange"
        f" {len(mapping)} beginbfchar {chars} endbfchar"
        " endcmap CMapName currentdict /CMap defineresource pop end end"
    )


def make_pdf(
    pages: list[list[str]], title: str | None = None, to_unicode: dict[str, str] | None = None
) -> bytes:
    """A valid PDF whose pages carry the given lines as real text (Helvetica), or, for an empty
    page, only a drawn line (no text layer). `to_unicode` maps characters of the lines to what a
    text extractor should read for them (UTF-16 code units in hex, as a ToUnicode CMap has)."""
    count = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
    font = "/Type /Font /Subtype /Type1 /BaseFont /Helvetica"
    objects: dict[int, str] = {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: f"<< /Type /Pages /Kids [{kids}] /Count {count} >>",
        3: f"<< {font} >>",
    }
    for i, lines in enumerate(pages):
        if lines:
            shown = " T* ".join(f"{_pdf_string(line)} Tj" for line in lines)
            stream = f"BT /F1 12 Tf 14 TL 72 720 Td {shown} ET"
        else:
            stream = "2 w 72 72 m 540 720 l S"
        objects[4 + 2 * i] = (
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
            f" /Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>"
        )
        objects[5 + 2 * i] = f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream"
    if to_unicode is not None:
        cmap = _to_unicode_cmap(to_unicode)
        objects[3] = f"<< {font} /ToUnicode {4 + 2 * count} 0 R >>"
        objects[4 + 2 * count] = f"<< /Length {len(cmap)} >>\nstream\n{cmap}\nendstream"
    info = None
    if title is not None:
        info = max(objects) + 1
        objects[info] = f"<< /Title {_pdf_string(title)} /CreationDate (D:20240305120000Z) >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n{objects[number]}\nendobj\n".encode("latin-1")
    xref = len(out)
    size = max(objects) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    for number in range(1, size):
        out += f"{offsets[number]:010d} 00000 n \n".encode()
    trailer = f"<< /Size {size} /Root 1 0 R" + (f" /Info {info} 0 R" if info else "") + " >>"
    out += f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def tls_files(directory: Any, hostname: str) -> tuple[str, str]:
    """A self-signed certificate for `hostname` (its own trust anchor) and its key, as PEM files.

    Needs the `cryptography` package; tests call `pytest.importorskip` first.
    """
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = f"{directory}/cert.pem", f"{directory}/key.pem"
    with open(cert_path, "wb") as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as out:
        out.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    return cert_path, key_path

"""Hostile documents built by the tests themselves: deflate-bomb PDFs, huge or deep HTML."""

from __future__ import annotations

import zlib


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF file of `objects` (numbered from 1; object 1 is the catalog) with a correct xref."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def text_ops(size: int) -> bytes:
    """A content stream of about `size` bytes that draws short words (cheap to compress)."""
    line = b"BT /F1 12 Tf 72 720 Td (hostile words here) Tj ET\n"
    return line * max(1, size // len(line))


def pdf_with_stream(content: bytes, pages: int = 1) -> bytes:
    """`pages` pages that all draw the one Flate-compressed content stream `content`."""
    return _pdf_with_packed_stream(zlib.compress(content, 9), pages)


def _pdf_with_packed_stream(packed: bytes, pages: int) -> bytes:
    kids = b" ".join(b"%d 0 R" % (5 + n) for n in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream",
    ]
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
    page += b" /Resources << /Font << /F1 3 0 R >> >> >>"
    objects += [page] * pages
    return _pdf(objects)


def deflate_bomb_pdf(inflated: int = 8 * 1024 * 1024) -> bytes:
    """One page whose content stream inflates from a few KB to `inflated` bytes (compressed a
    MiB at a time: the test never holds the whole stream)."""
    chunk = text_ops(1024 * 1024)
    packer = zlib.compressobj(9)
    parts = [packer.compress(chunk) for _ in range(max(1, inflated // len(chunk)))]
    return _pdf_with_packed_stream(b"".join(parts) + packer.flush(), 1)


def shared_stream_pdf(pages: int = 2000, stream: int = 1024 * 1024) -> bytes:
    """`pages` pages sharing one content stream of `stream` bytes: tiny file, endless work."""
    return pdf_with_stream(text_ops(stream), pages=pages)


def small_pdf(text: str = "A small honest document") -> bytes:
    content = b"BT /F1 12 Tf 72 720 Td (%s) Tj ET\n" % text.encode("latin-1")
    return pdf_with_stream(content)


def flat_html(size: int = 2_200_000) -> bytes:
    """Plain `<p><a><b>` repeated: many nodes, no nesting."""
    unit = b"<p><a href='/x'><b>word</b></a></p>\n"
    return b"<html><body>" + unit * (size // len(unit)) + b"</body></html>"


def nested_html(depth: int = 100_000) -> bytes:
    """`depth` nested elements, never closed."""
    return b"<html><body>" + b"<div><span>deep " * depth + b"</body></html>"


def long_table(rows: int = 12_000) -> bytes:
    """A table just under 50,000 elements that the main-content extractor reads in full: it
    leaves an extraction worker much larger than it started."""
    row = b"<tr><td>" + b"cell text " * 20 + b"</td><td>b</td><td>c</td></tr>"
    return b"<html><body><article><table>" + row * rows + b"</table></article></body></html>"

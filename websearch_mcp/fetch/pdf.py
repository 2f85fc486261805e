"""PDF text with page markers, through the optional `pypdf` (the `pdf` extra)."""

from __future__ import annotations

import io
from typing import Any

from websearch_mcp.fetch.document import Extracted
from websearch_mcp.fetch.errors import FetchError, FetchUnsupported

MAX_PAGES = 2000


def is_pdf(body: bytes) -> bool:
    """True when the bytes start like a PDF file (leading whitespace tolerated)."""
    return body[:1024].lstrip().startswith(b"%PDF-")


def page_marker(number: int) -> str:
    """The line that opens page `number` (1-based) in the extracted text."""
    return f"--- page {number} ---"


def extract_pdf(body: bytes) -> Extracted:
    """The text of every page, each after its marker; title and creation date from metadata.

    Raises FetchError when pypdf is missing, the file is damaged or encrypted, or no page has a
    text layer (a scanned document), rather than returning empty text.
    """
    try:
        from pypdf import PdfReader
    except ImportError:
        raise FetchUnsupported(
            "this page is a PDF and reading PDFs needs pypdf:"
            " install it with pip install 'websearch-mcp[pdf]'",
            reader_may_help=False,
        ) from None
    try:
        reader = PdfReader(io.BytesIO(body))
        if reader.is_encrypted and not reader.decrypt(""):
            raise FetchError("the PDF is encrypted with a password", reader_may_help=False)
        pages = [(page.extract_text() or "").strip() for page in reader.pages[:MAX_PAGES]]
        metadata = reader.metadata
    except FetchError:
        raise
    except Exception:  # pypdf raises many kinds on malformed input
        raise FetchError(
            "the PDF could not be read (damaged or unsupported)", reader_may_help=False
        ) from None
    if not any(pages):
        raise FetchError(
            f"the PDF has {len(pages)} page(s) but no text layer (probably scanned images),"
            " so no text could be extracted",
            reader_may_help=False,
        )
    content = "\n\n".join(f"{page_marker(n)}\n\n{text}" for n, text in enumerate(pages, 1))
    return Extracted(content=content, title=_title(metadata), published=_created(metadata))


def _title(metadata: Any) -> str | None:
    title = getattr(metadata, "title", None) if metadata else None
    return str(title).strip() or None if title else None


def _created(metadata: Any) -> str | None:
    try:
        created = metadata.creation_date if metadata else None
    except Exception:  # an unparseable date string in the file
        return None
    return created.date().isoformat() if created else None

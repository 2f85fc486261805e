"""PDF text with page markers, through the optional `pypdf` (the `pdf` extra)."""

from __future__ import annotations

import contextlib
import io
from typing import Any

from websearch_mcp.errors import FetchError, FetchUnsupported
from websearch_mcp.fetch.document import Extracted
from websearch_mcp.text_encoding import one_line, well_formed


def is_pdf(body: bytes) -> bool:
    """True when the bytes start like a PDF file (leading whitespace tolerated)."""
    return body[:1024].lstrip().startswith(b"%PDF-")


def page_marker(number: int) -> str:
    """The line that opens page `number` (1-based) in the extracted text."""
    return f"--- page {number} ---"


def require_pypdf() -> Any:
    """The pypdf module, or FetchError saying how to install it."""
    try:
        import pypdf
    except ImportError:
        raise FetchUnsupported(
            "this page is a PDF and reading PDFs needs pypdf:"
            " install it with pip install 'websearch-mcp[pdf]'",
            reader_may_help=False,
        ) from None
    return pypdf


def extract_pdf(
    body: bytes,
    *,
    max_pages: int = 500,
    max_decoded_bytes: int = 4 * 1024 * 1024,
    max_chars: int = 2_000_000,
) -> Extracted:
    """The text of every page, each after its marker; title and creation date from metadata.

    Reading stops after `max_pages` pages, once the pages' decompressed content streams add up
    to `max_decoded_bytes` (pages sharing one stream count it each time: each is read again), or
    once `max_chars` characters are out; `capped` then says which. Raises FetchError when pypdf
    is missing, the file is damaged or encrypted, or no page has a text layer (a scanned
    document), rather than returning empty text.
    """
    pypdf = require_pypdf()
    try:
        with _stream_limit(pypdf, max_decoded_bytes):
            reader = pypdf.PdfReader(io.BytesIO(body))
            if reader.is_encrypted and not reader.decrypt(""):
                # No password is ever given: no retry and no reader reads it.
                raise FetchUnsupported("the PDF is encrypted with a password")
            pages, capped = _page_texts(reader, max_pages, max_decoded_bytes, max_chars)
            metadata = reader.metadata
    except (FetchError, MemoryError):
        raise
    except Exception:  # pypdf raises many kinds on malformed input, including its own limits
        raise FetchError(
            "the PDF could not be read (damaged, unsupported, or a stream inflates past"
            f" {max_decoded_bytes} bytes: fetch.max_pdf_decoded_bytes)",
            reader_may_help=False,
        ) from None
    if not any(pages):
        raise FetchError(
            f"the PDF has {len(pages)} page(s) but no text layer (probably scanned images),"
            " so no text could be extracted",
            reader_may_help=False,
        )
    content = "\n\n".join(f"{page_marker(n)}\n\n{text}" for n, text in enumerate(pages, 1))
    if len(content) > max_chars:  # the page markers count too
        content = content[:max_chars]
        cut = f"text cut at {max_chars} characters (fetch.max_text_chars)"
        capped = cut if capped in (None, cut) else f"{capped}; {cut}"
    return Extracted(
        content=content, title=_title(metadata), published=_created(metadata), capped=capped
    )


def _stream_limit(pypdf: Any, limit: int) -> contextlib.AbstractContextManager[Any]:
    """No single stream may inflate past the whole document's budget (pypdf's own limits)."""
    if hasattr(pypdf, "apply_configuration"):  # pypdf 7 and later
        return pypdf.apply_configuration(
            zlib_maximum_output_length=limit,
            lzw_maximum_output_length=limit,
            run_length_maximum_output_length=limit,
        )
    pypdf.filters.ZLIB_MAX_OUTPUT_LENGTH = limit  # older pypdf: module constants
    return contextlib.nullcontext()


def _page_texts(
    reader: Any, max_pages: int, max_decoded_bytes: int, max_chars: int
) -> tuple[list[str], str | None]:
    """Each page's text, in order, until a limit is reached (and which limit, if one was)."""
    total = len(reader.pages)
    texts: list[str] = []
    decoded = chars = 0
    for number, page in enumerate(reader.pages, 1):
        if number > max_pages:
            return texts, f"read {max_pages} of {total} pages (fetch.max_pdf_pages)"
        contents = page.get_contents()
        decoded += len(contents.get_data()) if contents is not None else 0
        if decoded > max_decoded_bytes:
            return texts, (
                f"read {number - 1} of {total} pages: the content streams inflate past"
                f" {max_decoded_bytes} bytes (fetch.max_pdf_decoded_bytes)"
            )
        texts.append(well_formed(page.extract_text() or "").strip())
        chars += len(texts[-1])
        if chars > max_chars:
            return texts, f"text cut at {max_chars} characters (fetch.max_text_chars)"
    return texts, None


def _title(metadata: Any) -> str | None:
    title = getattr(metadata, "title", None) if metadata else None
    return one_line(str(title)) if title else None


def _created(metadata: Any) -> str | None:
    try:
        created = metadata.creation_date if metadata else None
    except Exception:  # an unparseable date string in the file
        return None
    return created.date().isoformat() if created else None

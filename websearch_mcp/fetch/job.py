"""One extraction job, as the server process hands it to an extraction worker.

Apart from `worker.py`, so that the server process can describe jobs without importing the
extractors (trafilatura and lxml: memory that only the workers use).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    """One document to extract: `kind` "html" or "pdf"; `html` is text when the charset is known
    and bytes otherwise (trafilatura then detects the encoding)."""

    kind: str
    body: str | bytes
    url: str
    max_text_chars: int
    max_html_nodes: int
    max_pdf_pages: int
    max_pdf_decoded_bytes: int

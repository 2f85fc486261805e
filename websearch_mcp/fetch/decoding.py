"""Content-Encoding decoding under a byte cap, so that a small compressed body cannot expand into
gigabytes (a decompression bomb): every stage stops as soon as its output passes the cap."""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterable, AsyncIterator

from websearch_mcp.errors import FetchError

ACCEPT_ENCODING = "gzip, deflate"
#: Codings undone per body at most: each is a zlib stage with its own window that every byte
#: passes, so a header listing thousands would cost memory and event-loop time (curl stops at 5).
MAX_CODINGS = 4


def too_large(cap: int) -> FetchError:
    """The error for a body past the cap (raw or decoded)."""
    return FetchError(f"too large: the page is bigger than the {cap:,}-byte limit")


async def capped_chunks(stream: AsyncIterable[bytes], cap: int) -> AsyncIterator[bytes]:
    """The chunks of a raw body as they come; `too_large` as soon as they pass `cap` in all."""
    received = 0
    async for chunk in stream:
        received += len(chunk)
        if received > cap:
            raise too_large(cap)
        yield chunk


class _Stage:
    """One zlib-based decoding step with a cap on its total output."""

    def __init__(self, coding: str, cap: int) -> None:
        self._coding = coding
        self._cap = cap
        self._produced = 0
        # gzip has its own header; "deflate" is zlib-wrapped by the standard but sometimes raw.
        wbits = zlib.MAX_WBITS | 16 if coding == "gzip" else zlib.MAX_WBITS
        self._inflate = zlib.decompressobj(wbits)
        self._started = False

    def feed(self, data: bytes) -> bytes:
        if not data or self._inflate.eof:
            return b""
        room = self._cap - self._produced
        try:
            out = self._inflate.decompress(data, room + 1)
        except zlib.error:
            if self._coding != "deflate" or self._started:
                raise FetchError(f"the page's {self._coding} compression is corrupt") from None
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            self._started = True
            return self.feed(data)
        self._started = True
        self._account(out)
        # Output stops at room + 1 bytes, so leftover input means the cap was passed.
        if self._inflate.unconsumed_tail:
            raise too_large(self._cap)
        return out

    def finish(self) -> bytes:
        out = self._inflate.flush()
        self._account(out)
        return out

    def _account(self, out: bytes) -> None:
        self._produced += len(out)
        if self._produced > self._cap:
            raise too_large(self._cap)


class CappedDecoder:
    """Decodes a body sent with the given Content-Encoding header, at most `cap` bytes out."""

    def __init__(self, content_encoding: str, cap: int) -> None:
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        codings = ["gzip" if c == "x-gzip" else c for c in codings if c != "identity"]
        unknown = [c for c in codings if c not in ("gzip", "deflate")]
        if unknown:
            name = unknown[0] if len(unknown[0]) <= 40 else f"{unknown[0][:40]}..."
            raise FetchError(f"the page uses an unsupported content encoding ({name})")
        if len(codings) > MAX_CODINGS:
            raise FetchError(
                f"the page uses {len(codings)} content encodings (at most {MAX_CODINGS} are undone)"
            )
        # Codings are listed in the order applied, so they are undone last to first.
        self._stages = [_Stage(c, cap) for c in reversed(codings)]
        self._cap = cap
        self._total = 0

    def feed(self, data: bytes) -> bytes:
        """Decoded bytes of the next raw chunk."""
        for stage in self._stages:
            data = stage.feed(data)
        return self._account(data)

    def finish(self) -> bytes:
        """Whatever the decoders still hold once the body has ended."""
        data = b""
        for stage in self._stages:
            data = stage.feed(data) + stage.finish()
        return self._account(data)

    def _account(self, data: bytes) -> bytes:
        self._total += len(data)
        if self._total > self._cap:
            raise too_large(self._cap)
        return data

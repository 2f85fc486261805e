"""The `proxy` section and the `fetch` section: how the service reaches the network."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field

from websearch_mcp.config.types import (
    CommaList,
    HttpUrl,
    ProxyUrl,
    SecretText,
    Section,
    networks,
    split_commas,
)


class ProxySettings(Section):
    """The proxy for engine requests; HTTP(S)_PROXY / ALL_PROXY / NO_PROXY also count."""

    url: ProxyUrl = Field(None, repr=False)
    no_proxy: CommaList = Field(default_factory=list)


class FetchSettings(Section):
    allow_networks: Annotated[CommaList, networks("a CIDR network")] = Field(default_factory=list)
    max_bytes: int = Field(10_485_760, ge=1024)
    timeout_seconds: float = Field(15.0, gt=0, le=300)
    max_redirects: int = Field(5, ge=0, le=20)
    allowed_ports: Annotated[
        list[Annotated[int, Field(ge=1, le=65535)]], BeforeValidator(split_commas)
    ] = Field(default_factory=lambda: [80, 443], min_length=1)
    connect_timeout_seconds: float = Field(5.0, gt=0, le=120)
    read_timeout_seconds: float = Field(10.0, gt=0, le=300)
    reader_fallback: bool = False
    reader_base_url: HttpUrl = "https://r.jina.ai"
    reader_api_key: SecretText = None
    # Extraction limits: every HTML and PDF is read in a worker process that is killed when it
    # runs past timeout_seconds or extract_memory_mib.
    max_text_chars: int = Field(2_000_000, ge=1000)
    max_html_nodes: int = Field(50_000, ge=100)
    max_pdf_pages: int = Field(500, ge=1)
    max_pdf_decoded_bytes: int = Field(4_194_304, ge=65536)
    extract_workers: int = Field(2, ge=1, le=32)
    extract_memory_mib: int = Field(768, ge=256)

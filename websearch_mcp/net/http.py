"""HTTP client factory and the one place where engine requests meet the network."""

from __future__ import annotations

import httpx

from websearch_mcp import __version__
from websearch_mcp.errors import EngineError
from websearch_mcp.models import HttpRequest, HttpResponse

USER_AGENT = f"websearch-mcp/{__version__} (+https://github.com/websearch-mcp)"
#: Engine answers larger than this are cut off and reported as an error: no engine sends this much.
MAX_RESPONSE_BYTES = 5 * 1024 * 1024


def build_client(*, proxy: str | None = None, trust_env: bool = True) -> httpx.AsyncClient:
    """One pooled, keep-alive client; engines share it unless their proxy differs."""
    return httpx.AsyncClient(
        headers={"User-Agent": USER_AGENT},
        follow_redirects=True,
        max_redirects=5,
        proxy=proxy,
        trust_env=trust_env,
        limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
        timeout=httpx.Timeout(10.0),
    )


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with every secret replaced, so error texts can never carry a key."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


async def send(
    client: httpx.AsyncClient, base_url: str, request: HttpRequest, timeout: float
) -> HttpResponse:
    """Send an engine's request to `base_url` and read at most `MAX_RESPONSE_BYTES` of the answer.

    Network failures become `EngineError` with the failure's kind only: httpx messages may quote the
    URL, and a URL may carry a key in its query string.
    """
    try:
        async with client.stream(
            request.method,
            base_url + request.path,
            params=request.params,
            json=request.json,
            data=request.data,
            headers=request.headers,
            timeout=timeout,
        ) as response:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise EngineError(f"response larger than {MAX_RESPONSE_BYTES // 1048576} MiB")
                chunks.append(chunk)
            return HttpResponse(
                status=response.status_code,
                headers={k.lower(): v for k, v in response.headers.items()},
                content=b"".join(chunks),
                url=redact(str(response.url), request.secrets),
            )
    except httpx.TimeoutException:
        raise
    except httpx.HTTPError as err:
        raise EngineError(f"connection failed ({type(err).__name__})") from None

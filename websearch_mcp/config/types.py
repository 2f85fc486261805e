"""The pieces every section shares: the section base and the validator types several keys use.

Each type checks one kind of value (a comma list, a URL of some schemes, networks, a secret) in
one place, so that a key of that kind says the same thing wherever it stands.
"""

from __future__ import annotations

import ipaddress
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

HTTP_SCHEMES = ("http://", "https://")
PROXY_SCHEMES = ("http://", "https://", "socks5://", "socks5h://")
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


class Section(BaseModel):
    """A section of the file: unknown keys are errors, aliases and names both accepted."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True)

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, data: Any) -> Any:
        """A blank value of a key that is unset by default unsets it: a variable left empty in
        an env file (`WEBSEARCH_MCP_LLM__BASE_URL=`) switches its feature off, not fails."""
        if not isinstance(data, dict):
            return data
        unset = {
            name
            for field_name, field in cls.model_fields.items()
            if field.default is None and not field.is_required()
            for name in _spellings(field_name, field.validation_alias)
        }
        return {
            key: None if key in unset and isinstance(value, str) and not value.strip() else value
            for key, value in data.items()
        }


def _spellings(name: str, alias: Any) -> set[str]:
    """A key's name and the other names it is accepted under."""
    if isinstance(alias, AliasChoices):
        return {name, *(choice for choice in alias.choices if isinstance(choice, str))}
    return {name, alias} if isinstance(alias, str) else {name}


def default_data_dir() -> Path:
    """The user's data directory for the cache (XDG on Unix); for a user without a home (an
    unnamed uid in a container), one in the temporary directory."""
    base = os.environ.get("XDG_DATA_HOME")
    if not base:
        try:
            base = str(Path.home() / ".local" / "share")
        except RuntimeError:  # no HOME and no passwd entry
            user = os.getuid() if hasattr(os, "getuid") else "user"
            base = str(Path(tempfile.gettempdir()) / f"websearch-mcp-{user}")
    return Path(base) / "websearch-mcp"


def split_commas(value: Any) -> Any:
    """A comma-separated string (from the environment) as a list; anything else unchanged.
    Commas alone are refused: read as no item, `TAVILY_API_KEYS=,` would silently drop the
    file's keys and `WEBSEARCH_MCP_TOKENS=,` switch authentication off."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            # Brackets YAML could not read as a list: split, they would stick to the first and
            # last items (`[a,,b]` as `[a` and `b]`).
            raise ValueError("a list in brackets that YAML cannot read: write [a, b], or a,b")
        items = [part.strip() for part in value.split(",") if part.strip()]
        if value.strip() and not items:
            raise ValueError(
                "holds commas but nothing between them: write a,b, or nothing for none"
            )
        return items
    return value


def _number_as_text(value: Any) -> Any:
    """A number as its text; anything else (text, a list, a mapping, true) unchanged, for the
    validation to refuse what is not text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def as_texts(value: Any) -> Any:
    """Every number in a list as text. A numeric-looking token parses from YAML as a number:
    taking it as text means a validation error never echoes a token back."""
    if isinstance(value, list):
        return [_number_as_text(item) for item in value]
    return value


def as_text(value: Any) -> Any:
    """A secret as text. A numeric-looking key parses from YAML as a number; taking it as text
    means a validation error can never echo the key back. A list or a mapping is left to be
    refused, not sent as its Python text."""
    return _number_as_text(value)


def starts_with(
    schemes: tuple[str, ...],
    *,
    hint: str = "",
    strip: bool = False,
    listed: str | None = None,
    host: bool = True,
) -> AfterValidator:
    """Text (or None) that must start with one of `schemes`, and name a host unless `host` is
    False (Redis's URLs default to the local one); `strip` drops a trailing slash. `listed`
    words the schemes in the message (default: `a, b or c`)."""
    shown = listed or ", ".join(schemes[:-1]) + " or " + schemes[-1]

    def check(value: Any) -> Any:
        if isinstance(value, str) and not value.startswith(schemes):
            raise ValueError(f"must start with {shown}{hint}")
        if isinstance(value, str):
            _check_address(value, host)
        return value.rstrip("/") if strip and value else value

    return AfterValidator(check)


def _check_address(url: str, host: bool = True) -> None:
    """A URL's host and port must read, here rather than at its first use. Its text is never
    quoted: a URL may hold a password."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # reading the port checks it, and the host in brackets
    except ValueError as err:
        what = "its [IPv6] host is malformed" if "IPv6" in str(err) else "its port is not 0-65535"
        raise ValueError(f"is not a valid URL: {what}") from None
    if host and not parts.hostname:  # `http://:3128`: every request would fail, or go direct
        raise ValueError("is not a valid URL: it names no host")


def each(check: Callable[[str], Any]) -> AfterValidator:
    """Run `check` on every item of a list (its ValueError names the item)."""

    def check_all(value: list[str]) -> list[str]:
        for item in value:
            check(item)
        return value

    return AfterValidator(check_all)


def networks(what: str) -> AfterValidator:
    """Every item an address or CIDR network; `what` names what is expected in the message."""

    def check(item: str) -> None:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise ValueError(f"{item!r} is not {what} such as 10.0.0.0/8") from None

    return each(check)


#: A list that may also be one comma-separated string (from the environment).
CommaList = Annotated[list[str], BeforeValidator(split_commas)]


_QUOTES = ("'", '"')


def printable_secret(value: str | None) -> str | None:
    """A key or token: printable ASCII, as an HTTP header carries it, which one pasted with a
    curly quote, an ellipsis or a line break is not, and not in quotes kept as part of it (its
    every request would fail). The message never shows it."""
    if value is not None and not (value.isascii() and value.isprintable()):
        raise ValueError(
            "holds a character an HTTP header cannot carry (not ASCII, or a control character);"
            " was it pasted with quotes or a line break?"
        )
    if value is not None and (value[:1] in _QUOTES or value[-1:] in _QUOTES):
        raise ValueError(
            "starts or ends with a quote: quotes that were not read as such (`docker run"
            " --env-file` keeps them in a value); write it without them"
        )
    return value


#: A comma list whose items are taken as text.
TextList = Annotated[list[str], BeforeValidator(lambda value: as_texts(split_commas(value)))]
#: An optional secret (an API key) taken as text, never shown.
SecretText = Annotated[
    str | None, BeforeValidator(as_text), AfterValidator(printable_secret), Field(repr=False)
]
#: An http(s) base URL, without its trailing slash.
HttpUrl = Annotated[str, starts_with(HTTP_SCHEMES, strip=True)]
#: Checks a proxy URL; other values (None, false) pass.
proxy_url = starts_with(PROXY_SCHEMES, listed=", ".join(PROXY_SCHEMES))
ProxyUrl = Annotated[str | None, proxy_url]
#: A Redis URL. Proxy and Redis URLs may hold a password: their fields are never shown.
RedisUrl = Annotated[str | None, starts_with(REDIS_SCHEMES, host=False)]
#: A signal's weight in the ranking: 0 switches it off.
Weight = Annotated[float, Field(ge=0.0, le=5.0)]
#: A span of days, up to a century.
Days = Annotated[float, Field(gt=0.0, le=36_500.0)]
#: A share or a probability, from 0 to 1.
Fraction = Annotated[float, Field(ge=0.0, le=1.0)]
#: How long a key or an engine rests, in seconds, up to a century: a rest without end (`inf`)
#: could never be told in a report ("next try in ...") nor kept in Redis, and one of 1e17 s
#: neither (Redis takes an expiry of up to 2**63 ms).
Rest = Annotated[float, Field(ge=0.0, le=100 * 365 * 86_400.0, allow_inf_nan=False)]

"""The fetcher's address policy and URL checks, and refusals that happen before any connection.

Nothing here reaches a server: every refused case asserts that no connection was opened.
"""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest

from websearch_mcp.config import FetchSettings
from websearch_mcp.errors import ConfigError, FetchError, ToolInputError
from websearch_mcp.fetch import FetchRefused, fetch_page, validate_fetch_args
from websearch_mcp.fetch.client import guarded_get
from websearch_mcp.fetch.ssrf import (
    LINK_LOCAL,
    LOOPBACK,
    MULTICAST,
    PRIVATE,
    RESERVED,
    SHARED,
    UNSPECIFIED,
    AddressPolicy,
    check_url,
    embedded_ipv4,
    parse_address,
)
from websearch_mcp.search.configuration import parse_config

REFUSED = [
    ("127.0.0.1", LOOPBACK),
    ("127.255.255.254", LOOPBACK),
    ("10.0.0.1", PRIVATE),
    ("172.16.0.1", PRIVATE),
    ("172.31.255.255", PRIVATE),
    ("192.168.1.1", PRIVATE),
    ("169.254.169.254", LINK_LOCAL),
    ("169.254.0.1", LINK_LOCAL),
    ("100.64.0.1", SHARED),
    ("100.127.255.255", SHARED),
    ("0.0.0.0", UNSPECIFIED),
    ("0.1.2.3", UNSPECIFIED),
    ("224.0.0.1", MULTICAST),
    ("239.255.255.250", MULTICAST),
    ("240.0.0.1", RESERVED),
    ("255.255.255.255", RESERVED),
    ("192.0.0.8", RESERVED),
    ("192.0.2.10", RESERVED),
    ("198.18.0.1", RESERVED),
    ("198.19.255.255", RESERVED),  # the last of benchmarking's 198.18.0.0/15
    ("198.51.100.7", RESERVED),
    ("203.0.113.9", RESERVED),
    ("192.88.99.1", RESERVED),
    ("::", UNSPECIFIED),
    ("::1", LOOPBACK),
    ("fe80::1", LINK_LOCAL),
    ("fe80::1%eth0", LINK_LOCAL),
    ("fc00::1", PRIVATE),
    ("fd12:3456:789a::1", PRIVATE),
    ("fec0::1", PRIVATE),
    ("ff02::1", MULTICAST),
    ("2001:db8::1", RESERVED),
    ("2001::1", RESERVED),  # Teredo
    ("100::1", RESERVED),
    ("64:ff9b:1::a00:1", RESERVED),
    ("3fff::1", RESERVED),
    ("4000::1", RESERVED),  # outside global unicast
    ("::ffff:127.0.0.1", LOOPBACK),  # IPv4-mapped
    ("::ffff:169.254.169.254", LINK_LOCAL),
    ("::ffff:10.1.2.3", PRIVATE),
    ("::ffff:a9fe:a9fe", LINK_LOCAL),  # the same, written in hex
    ("::127.0.0.1", LOOPBACK),  # IPv4-compatible
    ("::10.0.0.1", PRIVATE),
    ("64:ff9b::7f00:1", LOOPBACK),  # NAT64 of 127.0.0.1
    ("64:ff9b::a9fe:a9fe", LINK_LOCAL),
    ("2002:7f00:1::1", LOOPBACK),  # 6to4 of 127.0.0.1
    ("2002:a00:1::", PRIVATE),
    ("2002:a9fe:a9fe::", LINK_LOCAL),
    ("not-an-address", RESERVED),
]

ALLOWED = [
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "100.128.0.1",  # just past shared space
    "172.32.0.1",  # just past 172.16/12
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
]


@pytest.mark.parametrize(("address", "category"), REFUSED)
def test_policy_refuses_non_public_addresses(address: str, category: str) -> None:
    assert AddressPolicy().refusal(address) == category


@pytest.mark.parametrize("address", ALLOWED)
def test_policy_allows_public_addresses(address: str) -> None:
    assert AddressPolicy().refusal(address) is None


def test_allow_networks_open_only_the_listed_range() -> None:
    policy = AddressPolicy(["127.0.0.0/8", "fd00::/8"])
    assert policy.refusal("127.0.0.1") is None
    assert policy.refusal("127.9.9.9") is None
    assert policy.refusal("::ffff:127.0.0.1") is None  # the mapped form of an allowed address
    assert policy.refusal("fd00::5") is None
    assert policy.refusal("10.0.0.1") == PRIVATE
    assert policy.refusal("169.254.169.254") == LINK_LOCAL
    assert policy.refusal("::1") == LOOPBACK


def test_embedded_ipv4_forms() -> None:
    def emb(text: str) -> str | None:
        import ipaddress

        found = embedded_ipv4(ipaddress.IPv6Address(text))
        return str(found) if found else None

    assert emb("::ffff:1.2.3.4") == "1.2.3.4"
    assert emb("64:ff9b::102:304") == "1.2.3.4"
    assert emb("2002:102:304::") == "1.2.3.4"
    assert emb("::1.2.3.4") == "1.2.3.4"
    assert emb("::1") is None
    assert emb("2606:4700::1") is None


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "uses file:"),
        ("gopher://example.com/", "uses gopher:"),
        ("ftp://example.com/x", "uses ftp:"),
        ("http://user:pw@example.com/", "credentials"),
        ("http://example.com:8080/", "port 8080 (allowed ports: 80, 443)"),
        ("https://example.com:22/", "port 22"),
        # Hosts browsers (and so a reader API) read otherwise than a name lookup does
        ("http://%31%36%39.254.169.254/", "neither a name nor an address"),
        ("http://%6c%6f%63%61%6c%68%6f%73%74/", "neither a name nor an address"),
        ("http://1.2.3.4.5/", "neither a name nor an address"),
        ("http://example.0x10/", "neither a name nor an address"),
        ("http://1.2.3.4.0/", "neither a name nor an address"),  # five numbers
        ("http://256.1/", "neither a name nor an address"),  # a leading number over 255
        ("http://1.16777216/", "neither a name nor an address"),  # the last one too large
        ("http://4294967296/", "neither a name nor an address"),  # 2**32
        ("http://1.2.3.4.5./", "neither a name nor an address"),  # fully qualified
        ("http://example.09/", "neither a name nor an address"),  # a number, if a bad octal
        # A browser ends the host at a backslash: 169.254.169.254, path /latest/meta-data/
        ("http://169.254.169.254\\latest/meta-data/", "neither a name nor an address"),
        # Not an address with a zone id: decoded, 2852039166 is 169.254.169.254
        ("http://285203916%36/", "neither a name nor an address"),
        # "xn--" labels that decode to no valid name: httpx raises reading the host
        ("http://xn--a.example/", "not a valid international name"),
        ("http://xn--127-0.0.0.1/", "not a valid international name"),
    ],
)
def test_check_url_refusals(url: str, message: str) -> None:
    with pytest.raises(FetchRefused, match="refused") as info:
        check_url(httpx.URL(url), [80, 443])
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("0xff.1", "255.0.0.1"),
        ("0X7F.1", "127.0.0.1"),  # the hexadecimal prefix in capitals
        ("0", "0.0.0.0"),  # a lone 0 is a decimal zero, not an empty octal
        ("0x7f.0x.1", "127.0.0.1"),  # a bare 0x is zero
        ("4294967295", "255.255.255.255"),
        ("0xffffffff", "255.255.255.255"),
        ("0177.0.0.1", "127.0.0.1"),
        # Not addresses: too many numbers, a number too large, what int() reads but browsers don't
        ("1.2.3.4.0", None),
        ("256.1", None),
        ("1.16777216", None),
        ("4294967296", None),
        ("1_0.0.0.1", None),
        ("+1.0.0.1", None),
        ("\u0661\u0660.0.0.1", None),  # Arabic-Indic digits
        ("09.0.0.1", None),
    ],
)
def test_parse_address_reads_ipv4_as_browsers_do(host: str, address: str | None) -> None:
    parsed = parse_address(host)
    assert (str(parsed) if parsed else None) == address


def test_check_url_accepts_default_and_listed_ports() -> None:
    check_url(httpx.URL("http://example.com/"), [80, 443])
    check_url(httpx.URL("https://example.com/"), [80, 443])
    check_url(httpx.URL("http://example.com:8080/"), [8080])
    check_url(httpx.URL("https://example.com/"), [443])  # https without a port is on 443


@pytest.mark.parametrize(
    "url",
    ["http://my_host.example/", "http://xn--bcher-kva.example/", "http://[fe80::1%25eth0]/"],
)
def test_check_url_accepts_what_a_name_lookup_or_an_address_reads(url: str) -> None:
    # An underscore (as in service names), a valid international name, an IPv6 zone id.
    check_url(httpx.URL(url), [80])


@pytest.mark.parametrize(
    ("url", "max_chars", "start", "message"),
    [
        ("file:///etc/passwd", 100, 0, "only http and https"),
        ("gopher://example.com/", 100, 0, "only http and https"),
        ("javascript:alert(1)", 100, 0, "only http and https"),
        ("", 100, 0, "url:"),
        ("http://", 100, 0, "url:"),
        ("http://0177.0.0.1/", 100, 0, "not a valid URL"),
        ("http://xn--a.example/", 100, 0, "not a valid international name"),
        ("https://example.com/" + "a" * 9000, 100, 0, "at most 8192"),
        ("https://example.com/", 0, 0, "max_chars"),
        ("https://example.com/", 200_001, 0, "max_chars"),
        ("https://example.com/", True, 0, "max_chars"),
        ("https://example.com/", "100", 0, "max_chars"),
        ("https://example.com/", 100, -1, "start"),
        ("https://example.com/", 100, 1.5, "start"),
    ],
)
def test_validate_fetch_args_bounds(url: str, max_chars: object, start: object, message: str):
    with pytest.raises(ToolInputError, match=message):
        validate_fetch_args(url, max_chars, start)


def test_validate_fetch_args_accepts_the_bounds() -> None:
    validate_fetch_args("https://example.com/a?b=c", 1, 0)
    validate_fetch_args("http://example.com", 200_000, 10**9)
    at_limit = "https://example.com/" + "a" * (8192 - len("https://example.com/"))
    validate_fetch_args(at_limit, 100, 0)  # "at most 8192 characters": 8192 is allowed


async def _numeric_only(host: str, port: int) -> list[str]:
    """The system resolver restricted to numeric hosts, so a test can never send a DNS query."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST
    )
    return [str(info[4][0]) for info in infos]


@pytest.mark.parametrize(
    ("url", "category"),
    [
        ("http://169.254.169.254/latest/meta-data/", LINK_LOCAL),
        ("http://[::ffff:169.254.169.254]/", LINK_LOCAL),
        ("http://127.0.0.1/", LOOPBACK),
        ("http://[::1]/", LOOPBACK),
        ("http://0.0.0.0/", UNSPECIFIED),
        ("http://10.0.0.1/", PRIVATE),
        ("http://100.64.1.1/", SHARED),
        ("http://[fd00::1]/", PRIVATE),
        ("http://[64:ff9b::a9fe:a9fe]/", LINK_LOCAL),
        # Other spellings of 127.0.0.1, as the system resolver reads them
        ("http://2130706433/", LOOPBACK),
        ("http://0x7f.1/", LOOPBACK),
        ("http://127.1/", LOOPBACK),
        # A fully qualified address, with its trailing dot, as browsers read it
        ("http://169.254.169.254./latest/meta-data/", LINK_LOCAL),
        ("http://127.0.0.1./", LOOPBACK),
        # ... and the other spellings, which no name lookup reads once they end in a dot
        ("http://2130706433./", LOOPBACK),
        ("http://0x7f.1./", LOOPBACK),
        ("http://127.1./", LOOPBACK),
        ("http://0251.0376.0251.0376./", LINK_LOCAL),
        ("http://0xa9.0xfe.43518./", LINK_LOCAL),
    ],
)
async def test_refused_addresses_never_connect(
    url: str, category: str, connections: list[tuple[str, int]]
) -> None:
    with pytest.raises(FetchRefused) as info:
        await fetch_page(url, settings=FetchSettings(), resolver=_numeric_only)
    text = str(info.value)
    assert text.startswith("refused:") and f"a {category} address" in text
    assert "redirected" not in text  # the URL asked for was refused, not a redirect
    assert connections == []


async def test_hostname_resolving_to_a_private_address_is_refused_before_connecting(
    connections: list[tuple[str, int]],
) -> None:
    asked: list[tuple[str, int]] = []

    async def resolver(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return ["10.0.0.1"]

    with pytest.raises(FetchRefused, match="private address") as info:
        await fetch_page("http://intranet.example/", settings=FetchSettings(), resolver=resolver)
    assert asked == [("intranet.example", 80)]
    assert connections == []
    assert "10.0.0.1" not in str(info.value)  # the resolved address is not revealed


async def test_one_bad_address_among_several_refuses_the_host(
    connections: list[tuple[str, int]],
) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "169.254.169.254"]

    with pytest.raises(FetchRefused, match="link-local"):
        await fetch_page("https://mixed.example/", settings=FetchSettings(), resolver=resolver)
    assert connections == []


async def test_unresolvable_host_is_a_clear_error(connections: list[tuple[str, int]]) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(FetchError, match=r"could not resolve the host nowhere\.example"):
        await fetch_page("http://nowhere.example/", settings=FetchSettings(), resolver=resolver)
    # A label longer than DNS allows: the system resolver fails before asking any name server.
    too_long = "a" * 64 + ".example"
    with pytest.raises(FetchError, match=f"could not resolve the host {too_long}"):
        await fetch_page(f"http://{too_long}/", settings=FetchSettings())
    assert connections == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "uses file:"),
        ("gopher://127.0.0.1:70/_payload", "uses gopher:"),
        ("http://127.0.0.1:8080/", "port 8080"),
        ("http://user:secret@127.0.0.1/", "credentials"),
    ],
)
async def test_url_refusals_before_connecting(
    url: str, message: str, connections: list[tuple[str, int]]
) -> None:
    settings = FetchSettings(allow_networks=["127.0.0.0/8"])
    with pytest.raises(FetchRefused, match=message):
        await guarded_get(url, settings, resolver=_numeric_only)
    with pytest.raises((ToolInputError, FetchRefused)):  # a scheme is refused as an argument
        await fetch_page(url, settings=settings, resolver=_numeric_only)
    assert connections == []


def test_fetch_settings_validation() -> None:
    defaults = FetchSettings()
    assert defaults.allowed_ports == [80, 443]
    assert defaults.allow_networks == []
    assert defaults.reader_fallback is False
    with pytest.raises(ConfigError, match="not a CIDR network"):
        parse_config({"fetch": {"allow_networks": ["10.0.0.0/33"]}}, "test.yaml", environ={})
    with pytest.raises(ConfigError, match="allowed_ports"):
        parse_config({"fetch": {"allowed_ports": [0]}}, "test.yaml", environ={})
    with pytest.raises(ConfigError, match="reader_base_url"):
        parse_config({"fetch": {"reader_base_url": "ftp://x"}}, "test.yaml", environ={})
    keyed = parse_config({"fetch": {"reader_api_key": 123456789}}, "test.yaml", environ={})
    assert keyed.fetch.reader_api_key == "123456789"
    assert "123456789" not in repr(keyed)

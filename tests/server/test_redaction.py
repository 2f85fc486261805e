"""Every secret, in every form it is sent in, is absent from a whole debug log of real searches."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import httpx
import pytest

from testing import fake_academic, fake_engines
from testing.fake_engines import FakeEngines, Fault, serve_fake_engines
from testing.fake_llm import FakeLLM
from testing.fetch_helpers import LocalServer, send, settings_for
from testing.proxies import CountingSocks
from testing.server_helpers import MCP_HEADERS, results_for, tool_call
from testing.serving import serve_app
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.redaction import redact, without_key_parts
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app
from websearch_mcp.server.observability import configure_logging

TOKEN = "tok-PLANTED-bearer-5d1c7a20"
CX = "017576662512468239146:PLANTEDcx"  # an old-style engine id, with a colon of its own


def planted_key(engine: str) -> str:
    # `+`, `/` and `=` are percent-encoded in query strings: the encoded forms must go too.
    return f"{engine}-PLANTED+key/{len(engine)}="


def every_form(engine: str, key: str) -> set[str]:
    parts = {key, *key.rpartition(":")[::2]} if engine == "google_cse" else {key}
    return {
        form
        for part in parts
        for form in (part, quote(part, safe=""), quote(part), quote_plus(part))
    }


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    root = logging.getLogger()
    level = root.level
    yield stream
    for handler in [h for h in root.handlers if getattr(h, "websearch_mcp", False)]:
        root.removeHandler(handler)
    root.setLevel(level)


def test_debug_log_of_every_keyed_engine_holds_no_key(log_stream: io.StringIO) -> None:
    keys = {name: planted_key(name) for name in ENGINES}
    keys["google_cse"] = f"{CX}:AIza-PLANTED+cse/key="
    with (
        serve_fake_engines(FakeEngines(results_for)) as web,
        serve_app(fake_academic.FakeAcademic().app) as academic,
    ):
        urls = {**fake_engines.base_urls(web), **fake_academic.base_urls(academic)}
        # Engines without a fake of their own get 404 from the web fake: their request URLs
        # (with the keys in them) are still sent and logged.
        engines = {
            name: {"enabled": True, "api_keys": [keys[name]], "base_url": urls.get(name, web)}
            for name in ENGINES
        }
        settings = parse_config(
            {
                "engines": engines,
                "search": {"deadline_seconds": 5},
                "cache": {"backend": "none"},
                "server": {"auth_tokens": [TOKEN], "log_level": "debug"},
            },
            "test",
            environ={},
        )
        configure_logging("text", "debug", settings.secrets(), stream=log_stream)
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
        with serve_app(create_app(settings)) as url, httpx.Client(timeout=30) as http:
            for tool in ("web_search", "academic_search"):
                body = tool_call({"query": "python asyncio"}, name=tool)
                answer = http.post(f"{url}/mcp", headers=headers, json=body).json()["result"]
                asked = {e["name"] for e in answer["structuredContent"]["engines"]}
                assert asked and not answer["isError"], answer
            http.get(f"{url}/search", params={"q": "asyncio", "pageno": "2"}, headers=headers)
    log = log_stream.getvalue()
    # The client's request-URL lines are there (so the test can see a key if one leaked) ...
    assert "HTTP Request: GET" in log and "***" in log
    for name, key in keys.items():
        for form in every_form(name, key):
            assert form not in log, f"{name}'s key appears in the debug log as {form!r}"
    assert TOKEN not in log


def test_every_configured_secret_is_listed_in_the_forms_it_is_sent_in() -> None:
    settings = parse_config(
        {
            "engines": {"bing": {"proxy": "http://user:pr%40xy-PLANTED-1@proxy.example:8080"}},
            "cache": {"backend": "none", "redis_url": "redis://:re%2Fdis-PLANTED-2@redis:6379/0"},
            "llm": {"api_key": "llm-PLANTED-key-3"},
            "fetch": {"reader_api_key": "reader-PLANTED-key-4"},
        },
        "test",
        environ={},
    )
    secrets = settings.secrets()
    for secret in (
        "pr@xy-PLANTED-1",
        "re/dis-PLANTED-2",
        "llm-PLANTED-key-3",
        "reader-PLANTED-key-4",
    ):
        assert secret in secrets, secret
    assert "re%2Fdis-PLANTED-2" in secrets  # as written in the URL too
    # Longest first: a secret that begins another is never masked before it, leaving its tail.
    assert list(secrets) == sorted(secrets, key=len, reverse=True)


def test_the_parts_of_a_combined_key_are_secrets_from_eight_characters() -> None:
    # `<cx>:<key>`, where the engine id holds a colon of its own: each part is sent alone.
    key = "01757662:PLANTcx:AIza-PLANTED-5"
    settings = parse_config({"engines": {"google_cse": {"api_keys": [key]}}}, "test", environ={})
    secrets = settings.secrets()
    for part in (key, "01757662:PLANTcx", "01757662", "AIza-PLANTED-5"):
        assert part in secrets, part
    assert "PLANTcx" not in secrets  # shorter than eight: alone, it would match ordinary words


def test_passwords_in_base_urls_are_listed_as_secrets() -> None:
    settings = parse_config(
        {
            "llm": {"base_url": "http://u:llm-PLANTED-2@127.0.0.1:7/v1", "model": "m"},
            "fetch": {"reader_base_url": "http://u:reader-PLANTED-3@127.0.0.1:5"},
            # redis-py reads a password in the query too.
            "cache": {"backend": "redis", "redis_url": "redis://127.0.0.1/0?password=rd-PLANTED-4"},
            # A gateway's token in the query of a base URL.
            "engines": {
                "searxng": {"base_url": "http://admin:sx%2FPLANTED-1@127.0.0.1:8/"},
                "jina": {"base_url": "http://127.0.0.1:6/?api_key=jn-PLANTED-5&lang=en"},
            },
        },
        "test",
        environ={},
    )
    secrets = settings.secrets()
    planted = (
        "sx/PLANTED-1",
        "sx%2FPLANTED-1",
        "llm-PLANTED-2",
        "reader-PLANTED-3",
        "rd-PLANTED-4",
        "jn-PLANTED-5",
    )
    for secret in planted:
        assert secret in secrets, secret
    assert "en" not in secrets  # other parameters are no secrets


@pytest.mark.parametrize(
    "query",
    [
        "bypass_cache=1&passthrough=true&format=json&pass=pw",  # "pass" inside a word
        "pass_through=true&pass-headers=1&pwd_reset=json&pass=pw",  # and another word after
    ],
)
def test_parameters_only_named_like_a_password_are_no_secrets(query: str) -> None:
    """A password parameter is masked at any length; "pass" inside another parameter's name
    (`bypass_cache`, `passthrough`) or followed by another word (`pass_through`,
    `pwd_reset`) names none: masking its value ("1", "true", "json") would cut every such word
    out of the logs and the status page."""
    url = f"http://127.0.0.1:6/?{query}"
    settings = parse_config({"engines": {"jina": {"base_url": url}}}, "test", environ={})
    secrets = settings.secrets()
    assert "pw" in secrets
    for word in ("1", "true", "json"):
        assert word not in secrets, word
    assert redact('{"cached": true}', secrets) == '{"cached": true}'


@pytest.mark.parametrize("name", ["user[password]", "password1", "pass2", "db_passwd[]"])
def test_a_password_named_with_a_number_or_in_brackets_is_masked_at_any_length(
    name: str,
) -> None:
    """docs/security.md: `?password=` is masked at any length. The name's last word is still
    "password" with a number or a form's brackets after it (`user[password]=`, `password1=`):
    read as the name's last characters, a short password there was no secret (it was before)."""
    url = f"http://127.0.0.1:6/?{quote(name)}=hunter2&lang=en"
    settings = parse_config({"engines": {"jina": {"base_url": url}}}, "test", environ={})
    secrets = settings.secrets()
    assert "hunter2" in secrets
    assert "en" not in secrets


def test_a_query_token_with_a_plus_is_masked_as_the_url_writes_it() -> None:
    """A base64 token in a base URL's query keeps its `+` and `/` in every request line the
    client logs; read as a form value (`+` as a space) only, that line kept it whole."""
    url = "http://127.0.0.1:6/?api_key=jn+PLANTED/6x==&lang=en"
    settings = parse_config({"engines": {"jina": {"base_url": url}}}, "test", environ={})
    logged = f"HTTP Request: GET {url}&q=test"
    assert "PLANTED" not in redact(logged, settings.secrets())


def test_credential_parameters_of_a_base_url_are_secrets_by_name_and_length() -> None:
    """`?token=` names a credential as `?api_key=` does; a password is one at any length, any
    other credential value from eight characters (`?key=1` names none)."""
    base_url = "http://127.0.0.1:6/?token=tk-PLANT&db_password=pw1&key=1"
    settings = parse_config({"engines": {"jina": {"base_url": base_url}}}, "test", environ={})
    secrets = settings.secrets()
    for secret in ("tk-PLANT", "pw1"):  # eight characters; a password of three
        assert secret in secrets, secret
    assert "1" not in secrets


@pytest.mark.parametrize(
    "parameter",
    [
        "jwt=eyJhbGciOiJIUzI1NiJ9.PLANTED-1",
        "credential=PLANTED-cred-2",
        "access_code=PLANTED-code-3",
        "session=PLANTED-sess-4",
        "PHPSESSID=PLANTED-sess-5",
        "sid=PLANTED-sid-6",
        "lang=en#token=PLANTED-frag-7",  # never sent, but logged with the URL
        "authorization=PLANTED-auth-8",  # "auth", though "author" opens it
        "accesscode=PLANTED-code-9",
    ],
)
def test_a_credential_parameter_of_any_common_name_in_a_base_url_is_a_secret(
    parameter: str,
) -> None:
    url = f"http://127.0.0.1:6/?{parameter}"
    settings = parse_config({"engines": {"searxng": {"base_url": url}}}, "test", environ={})
    assert parameter.rpartition("=")[2] in settings.secrets()


@pytest.mark.parametrize(
    "parameter",
    [
        "author=Shakespeare",
        "authors=Shakespeare",
        "keyword=research",
        "keywords=research",
        "side=leftmost",
    ],
)
def test_search_words_in_a_base_url_are_no_secrets(parameter: str) -> None:
    """`auth`, `key` and `sid` inside these names name no credential: their values would be
    masked in every log line and on the status page."""
    url = f"http://127.0.0.1:6/?{parameter}"
    settings = parse_config({"engines": {"searxng": {"base_url": url}}}, "test", environ={})
    assert parameter.partition("=")[2] not in settings.secrets()


def test_passwords_in_the_standard_proxy_variables_are_secrets() -> None:
    settings = parse_config({}, "test", environ={})
    environ = {
        "https_proxy": "http://u:env-PLANTED-1@127.0.0.1:3128",
        "ALL_PROXY": "u:env%2FPLANTED-2@127.0.0.1:1080",  # no scheme: an HTTP proxy
        "HTTP_PROXY": "http://[unclosed",  # read by no request either
    }
    secrets = settings.secrets(environ)
    for secret in ("env-PLANTED-1", "env/PLANTED-2", "env%2FPLANTED-2"):
        assert secret in secrets, secret
    assert "env-PLANTED-1" not in settings.secrets({})


def test_a_password_in_the_model_url_is_absent_from_the_debug_log(
    log_stream: io.StringIO,
) -> None:
    password = "llm-PLANTED-password-8"
    llm = FakeLLM()
    with serve_fake_engines(FakeEngines(results_for)) as web, serve_app(llm.app) as model:
        settings = parse_config(
            {
                "engines": {
                    **{name: {"enabled": False} for name in ENGINES},
                    "searxng": {
                        "enabled": True,
                        "base_url": fake_engines.base_urls(web)["searxng"],
                    },
                },
                "search": {"deadline_seconds": 5},
                "cache": {"backend": "none"},
                # A model server behind HTTP Basic authentication.
                "llm": {"base_url": model.replace("//", f"//u:{password}@") + "/v1", "model": "m"},
            },
            "test",
            environ={},
        )
        configure_logging("text", "debug", settings.secrets(), stream=log_stream)
        with serve_app(create_app(settings)) as url, httpx.Client(timeout=30) as http:
            body = tool_call({"query": "python asyncio", "summarize": True})
            answer = http.post(f"{url}/mcp", headers=MCP_HEADERS, json=body).json()["result"]
    assert answer["structuredContent"]["summary"] and llm.requests  # the model was asked
    log = log_stream.getvalue()
    assert "HTTP Request: POST http://u:***@127.0.0.1:" in log
    assert password not in log


@pytest.mark.parametrize("given_in", ["proxy.url", "ALL_PROXY"])
@pytest.mark.parametrize("password", ["socks-PLANTED-pass-6", "pässwort-PLANTED-7"])
def test_a_socks_proxy_login_is_absent_from_every_log_record(
    password: str,
    given_in: str,
    log_stream: io.StringIO,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reader fallback through a proxy with a SOCKS5 login, from `proxy.url` or the standard
    variable: the HTTP client's debug line of the SOCKS handshake prints the login as bytes
    (`b'p\\xc3\\xa4sswort...'`), under a logger of its own."""
    caplog.set_level(1)
    for name in ("httpx", "httpcore", "httpcore.socks"):
        caplog.set_level(1, logger=name)
    with LocalServer() as pages, CountingSocks() as socks:
        pages.routes["/blocked"] = lambda h: send(h, 403, b"denied", "text/html")
        reader = b'{"data": {"title": "Read", "content": "The page, as the reader read it."}}'
        pages.routes["/reader/*"] = lambda h: send(h, 200, reader, "application/json")
        fetch = settings_for(pages, reader_fallback=True, reader_base_url=pages.url("/reader"))
        proxy = socks.url.replace("http://", f"socks5://user:{quote(password, safe='')}@")
        for name in ("no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
            monkeypatch.delenv(name, raising=False)
        if given_in == "ALL_PROXY":
            monkeypatch.setenv("ALL_PROXY", proxy)
        settings = parse_config(
            {
                "fetch": fetch.model_dump(),
                "proxy": {"url": proxy if given_in == "proxy.url" else None},
                "cache": {"backend": "none"},
                "server": {"log_level": "debug"},
            },
            "test",
            environ={},
        )
        configure_logging("text", "debug", settings.secrets(), stream=log_stream)
        with (
            serve_app(create_app(settings)) as url,
            httpx.Client(timeout=30, trust_env=False) as http,
        ):
            body = tool_call({"url": pages.url("/blocked")}, name="fetch_page")
            answer = http.post(f"{url}/mcp", headers=MCP_HEADERS, json=body).json()["result"]
    assert answer["structuredContent"]["via"] == "reader"
    assert socks.credentials == [f"user:{password}"]  # the login was sent
    log = log_stream.getvalue()
    assert "setup_socks5_connection" in caplog.text and "setup_socks5_connection" in log
    for form in (password, repr(password.encode())[2:-1]):
        assert form not in caplog.text, f"a log record holds the password as {form!r}"
        assert form not in log, f"the log holds the password as {form!r}"


def test_an_engine_error_quoting_its_request_url_holds_no_key(tmp_path: Path) -> None:
    key = planted_key("serpapi")
    # The API answers a server error quoting the URL it was asked, the key percent-encoded.
    echo = json.dumps({"error": f"upstream failed for /search.json?api_key={quote_plus(key)}"})
    fake = FakeEngines(results_for, faults={"serpapi": Fault(status=500, body=echo)})
    with serve_fake_engines(fake) as web:
        settings = parse_config(
            {
                "engines": {
                    **{name: {"enabled": False} for name in ENGINES},
                    "searxng": {
                        "enabled": True,
                        "base_url": fake_engines.base_urls(web)["searxng"],
                    },
                    "serpapi": {
                        "enabled": True,
                        "api_keys": [key],
                        "base_url": f"{web}/other/serpapi",
                    },
                },
                "search": {"deadline_seconds": 5, "retry": {"retries": 0}},
                "cache": {"backend": "sqlite", "path": str(tmp_path / "cache.sqlite3")},
            },
            "test",
            environ={},
        )
        with serve_app(create_app(settings)) as url, httpx.Client(timeout=30) as http:
            body = tool_call({"query": "python asyncio"})
            answer = http.post(f"{url}/mcp", headers=MCP_HEADERS, json=body).json()["result"]
    reports = {e["name"]: e for e in answer["structuredContent"]["engines"]}
    assert "upstream failed" in reports["serpapi"]["error"]  # the API's text is reported
    stored = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    assert b"upstream failed" in stored  # the partial answer was cached with its reports
    for form in every_form("serpapi", key):
        assert form not in json.dumps(answer), f"the answer holds the key as {form!r}"
        assert form.encode() not in stored, f"the cache file holds the key as {form!r}"


def test_the_longest_secret_is_masked_first() -> None:
    from websearch_mcp.redaction import Redactor

    mask = Redactor(["PLANTED-secret-1", "PLANTED-secret-1-and-its-tail"])
    assert mask("key=PLANTED-secret-1-and-its-tail") == "key=***"
    # Whatever order they come in: no tail of a longer one is ever left shown.
    heads = [f"PLANTED-secret-{n}x" for n in range(16)]
    mask = Redactor([*heads, *(f"{head}-and-its-tail" for head in heads)])
    assert mask(" ".join(f"{head}-and-its-tail" for head in heads)) == " ".join(["***"] * 16)


def test_a_key_like_token_of_twelve_characters_is_masked_in_an_api_error() -> None:
    from websearch_mcp.engines.common import api_error
    from websearch_mcp.models import HttpResponse

    error = api_error("bad request for abc123def456", HttpResponse(400, {}, b""))
    assert "abc123def456" not in str(error) and "***" in str(error)


def test_short_secrets_are_masked_where_they_stand_and_leave_the_log_readable(
    log_stream: io.StringIO,
) -> None:
    # A local model's placeholder key, a short token: masked inside every word, they turned
    # "HTTP Request" into "HTTP Reques***".
    with serve_fake_engines(FakeEngines(results_for)) as web:
        urls = fake_engines.base_urls(web)
        settings = parse_config(
            {
                "engines": {
                    **{name: {"enabled": False} for name in ENGINES},
                    "searxng": {"enabled": True, "base_url": urls["searxng"]},
                    # Not served by the fake (404): its URL, key in the query string, is logged.
                    "serpapi": {"enabled": True, "api_keys": ["k9"], "base_url": web},
                },
                "search": {"deadline_seconds": 5},
                "cache": {"backend": "none"},
                "server": {"auth_tokens": ["t"]},
                "llm": {"api_key": "x"},
            },
            "test",
            environ={},
        )
        configure_logging("text", "debug", settings.secrets(), stream=log_stream)
        headers = {**MCP_HEADERS, "Authorization": "Bearer t"}
        with serve_app(create_app(settings)) as url, httpx.Client(timeout=30) as http:
            body = tool_call({"query": "python asyncio"})
            answer = http.post(f"{url}/mcp", headers=headers, json=body).json()["result"]
            assert not answer["isError"]
    log = log_stream.getvalue()
    assert "HTTP Request: GET http://" in log and "websearch_mcp.tool" in log
    assert "api_key=***" in log and "api_key=k9" not in log


def test_secrets_of_eight_characters_are_masked_inside_words_and_shorter_ones_where_alone() -> None:
    from websearch_mcp.redaction import redact

    assert redact("sent as xs3cr3tABy", ["s3cr3tAB"]) == "sent as x***y"
    assert redact("sent as xs3cr3tAy", ["s3cr3tA"]) == "sent as xs3cr3tAy"
    assert redact("api_key=s3cr3tA&q=1", ["s3cr3tA"]) == "api_key=***&q=1"


def test_a_short_secret_beside_cjk_text_is_masked() -> None:
    from websearch_mcp.redaction import redact

    # CJK letters are no ASCII word characters: a short key quoted between them stands alone.
    assert redact("密钥k9无效", ["k9"]) == "密钥***无效"


def test_only_a_keys_own_start_and_end_around_an_elision_are_masked() -> None:
    """An API's error quotes a key in part (`sk-pro***0d2e`, `sk-...0d2e`): its start and end
    go whole, hyphens and all; the ellipses, emphasis and words of the rest of the error stay,
    as a word starting as a key too short to be told from a word does."""
    key = "sk-proj-planted-7f3a-0d2e"
    said = "key sk-pro***a-0d2e or sk-...7f3a-0d2e: loading... ***bold*** … done"
    assert without_key_parts(said, [key]) == "key *** or ***: loading... ***bold*** … done"
    assert without_key_parts("k9... is wrong", ["k9x7"]) == "k9... is wrong"


@pytest.mark.parametrize("form", ["raw", "encoded", "long", "markup", "object"])
def test_an_api_error_quoting_the_query_in_any_form_leaves_it_out_of_the_log(
    log_stream: io.StringIO, form: str
) -> None:
    """docs/security.md: queries are not logged at info and above, though an API may quote
    one, URL-encoded, cut short at the 200 characters its error is kept to, or in a form the
    engines' reading of its error leaves: tags stripped, or an object written as JSON."""
    query = "merger talks with zanzibar holdings"
    if form == "long":
        query = " ".join([query] * 8)
    if form == "markup":
        query = "merger talks <section> zanzibar holdings"
    if form == "object":
        query = 'merger "talks" with <b> zanzibar café'
    quoted = quote(query, safe="") if form == "encoded" else query
    message: object = {"q": query} if form == "object" else f"bad q={quoted}"
    fake = FakeEngines(results_for)
    fake.faults["serper"] = Fault(status=400, body=json.dumps({"message": message}))
    with serve_fake_engines(fake) as web:
        urls = fake_engines.base_urls(web)
        engines: dict[str, dict[str, Any]] = {name: {"enabled": False} for name in ENGINES}
        engines["serper"] = {"api_keys": ["serper-key-0123456789"], "base_url": urls["serper"]}
        engines["searxng"] = {"enabled": True, "base_url": urls["searxng"]}
        settings = parse_config(
            {"engines": engines, "cache": {"backend": "none"}}, "test", environ={}
        )
        configure_logging("json", "info", settings.secrets(), stream=log_stream)
        with serve_app(create_app(settings)) as url:
            body = tool_call({"query": query})
            httpx.post(f"{url}/mcp", headers=MCP_HEADERS, json=body, timeout=20)
            status = httpx.get(f"{url}/status.json", timeout=5).text
    log = log_stream.getvalue()
    assert "engine serper failed" in log
    assert "zanzibar" not in log and "zanzibar" not in status

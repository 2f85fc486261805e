"""Searches against a Redis whose name never resolves, measured beside the same searches
without Redis. Run by tests/cache/test_hung_lookup.py inside a user, mount and network
namespace of its own (`unshare`), where /etc/resolv.conf names a DNS server on 127.0.0.1 that
reads every question and answers none: the Redis host's lookup goes through the C library's
resolver, as in a container without outside DNS, and hangs there.

Prints one JSON object: the seconds each search took with and without Redis, what each
answered, what `/readyz` said and how long it took, and how many questions the silent resolver
was sent.
"""

from __future__ import annotations

import fcntl
import json
import logging
import socket
import struct
import sys
import threading
import time
from typing import Any

import httpx

from testing.cache_service import config
from testing.fake_engines import FakeEngines, serve_fake_engines
from testing.server_helpers import MCP_HEADERS, results_for, tool_call
from testing.serving import serve_app
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app

#: The Redis host: asked of the resolver on 127.0.0.1 only, which never answers.
REDIS_HOST = "redis.invalid"
SEARCHES = 6


def bring_loopback_up() -> None:
    """A new network namespace starts with `lo` down."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(sock, siocgifflags, request))[1]
        fcntl.ioctl(sock, siocsifflags, struct.pack("16sh", b"lo", flags | iff_up))


class SilentDns:
    """A DNS server on 127.0.0.1:53 that reads every question and answers none."""

    def __init__(self) -> None:
        self.questions = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 53))
        threading.Thread(target=self._swallow, daemon=True).start()

    def _swallow(self) -> None:
        while True:
            try:
                self.sock.recvfrom(4096)
            except OSError:
                return
            self.questions += 1


def timed_searches(url: str, prefix: str) -> list[dict[str, Any]]:
    """Fresh searches one after another, then the same number at once; each timed."""
    out: list[dict[str, Any]] = []

    def one(client: httpx.Client, query: str) -> None:
        started = time.monotonic()
        body = tool_call({"query": query})
        response = client.post(f"{url}/mcp", headers=MCP_HEADERS, json=body)
        seconds = time.monotonic() - started
        result = response.json()["result"].get("structuredContent", {})
        statuses = {e["name"]: e["status"] for e in result.get("engines", [])}
        out.append({"seconds": seconds, "results": len(result.get("results", [])), **statuses})

    with httpx.Client(timeout=30) as client:
        for i in range(SEARCHES):
            one(client, f"{prefix} sequential {i}")
        threads = [
            threading.Thread(target=one, args=(client, f"{prefix} together {i}"))
            for i in range(SEARCHES)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return out


def readyz(url: str) -> dict[str, Any]:
    started = time.monotonic()
    response = httpx.get(f"{url}/readyz", timeout=30)
    return {**response.json(), "seconds": time.monotonic() - started, "code": response.status_code}


def main() -> None:
    logging.disable(logging.WARNING)  # the report is the output
    bring_loopback_up()
    dns = SilentDns()
    report: dict[str, Any] = {}
    with serve_fake_engines(FakeEngines(results_for)) as engines_url:
        # By name, as engines usually are: the lookup runs where asyncio runs every lookup.
        by_name = engines_url.replace("127.0.0.1", "localhost")
        for label, cache in (
            ("without_redis", {"backend": "none"}),
            (
                "redis_unresolvable",
                {"backend": "redis", "redis_url": f"redis://{REDIS_HOST}:6379/0"},
            ),
        ):
            settings = parse_config(config(by_name, cache), "hung lookup", environ={})
            with serve_app(create_app(settings)) as url:
                report[label] = timed_searches(url, label)
                report[f"{label}_readyz"] = readyz(url)
    report["questions"] = dns.questions
    dns.sock.close()
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()

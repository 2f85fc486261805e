"""A throwaway `redis-server` on 127.0.0.1 for the cache tests: free port, no persistence."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

#: The bound of each Redis call in tests that are not about a slow Redis: on a loaded machine
#: the default (`cache.redis_timeout_seconds`) can pass before a healthy server's answer is read.
LENIENT_SECONDS = 2.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_binary() -> str:
    """The path of `redis-server`, or a skip that says how to install it."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    return binary


class RedisServer:
    """One `redis-server` process; `stop()` then `start()` restarts it empty on the same port."""

    def __init__(self, binary: str, *, unix_socket: bool = False) -> None:
        self.binary = binary
        self.port = free_port()
        self._dir = Path(tempfile.mkdtemp(prefix="websearch-mcp-redis-"))
        self._process: subprocess.Popen[bytes] | None = None
        #: A Unix socket it also listens on, when asked for.
        self.socket_path = self._dir / "redis.sock" if unix_socket else None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        """Start the server and wait until it answers PING."""
        args = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self._dir),
            "--daemonize", "no",
        ]  # fmt: skip
        if self.socket_path is not None:
            args += ["--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
        self._process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self._process.returncode}")
            try:
                if self.command("PING") == b"+PONG":
                    return
            except OSError:
                pass
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL) and wait for it to be gone."""
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)

    def close(self) -> None:
        """Stop the server and remove its working directory."""
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)

    def command(self, *args: str) -> bytes:
        """Send one command and return the first line of the reply (enough for PING, FLUSHALL)."""
        parts = [f"*{len(args)}\r\n".encode()]
        for arg in args:
            data = arg.encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(b"".join(parts))
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                reply += chunk
        return reply.split(b"\r\n", 1)[0]

    @contextmanager
    def refusing_writes(self) -> Iterator[None]:
        """Redis out of memory while inside: every write refused (OOM), reads still answered."""
        assert self.command("CONFIG", "SET", "maxmemory-policy", "noeviction") == b"+OK"
        assert self.command("CONFIG", "SET", "maxmemory", "1") == b"+OK"
        try:
            yield
        finally:
            self.command("CONFIG", "SET", "maxmemory", "0")

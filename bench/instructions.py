"""Instructions per fresh search in the real server process, counted by valgrind's callgrind.

    python -m bench.instructions [--searches N]

On a shared machine the time of one run moves by a tenth between runs of the same code; an
instruction count does not, so this is how a change of a few percent is seen. The service runs
as `bench.latency` runs it (`bench.latency_server service`, one worker) under callgrind, the
fake engines in their own process answer at once, and a client sends `web_search` with a new
query each time, one after another, after five to warm up. Two runs, of `N / 4` and `N`
searches: the difference of their totals over the difference of their searches is one search,
with the start and the stop of the process subtracted out. It needs valgrind (Debian's package);
each run takes about a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import httpx
import yaml

from bench.latency import DELAYS, HOST, service_config
from bench.loadgen import tool_call
from bench.synthetic import query_text

WARM_UP = 5
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _started(proc: subprocess.Popen[str]) -> int:
    """The port a `bench.latency_server` process prints once it listens."""
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if not line or line[0] != "port":
        raise RuntimeError("a server process did not start")
    return int(line[1])


def count(searches: int, engines_port: int, workdir: Path) -> int:
    """Instructions of one service process that answered `searches` fresh searches (and the
    warm-up's), from its start to its stop."""
    config = workdir / "websearch-mcp.yaml"
    cache = workdir / f"cache-{searches}.sqlite3"
    config.write_text(
        yaml.safe_dump(service_config(f"http://{HOST}:{engines_port}", cache, "warning"))
    )
    out = workdir / f"callgrind-{searches}.out"
    service = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-m",
         "bench.latency_server", "service", "--config", str(config), "--workers", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},  # the same string hashes in every run
    )  # fmt: skip
    try:
        port = _started(service)
        with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=120) as client:
            for i in range(WARM_UP + searches):
                body = tool_call("web_search", {"query": query_text(i, "instructions")})
                answer = client.post("/mcp", content=body, headers=HEADERS)
                if answer.status_code != 200 or '"isError":true' in answer.text:
                    raise RuntimeError(f"search {i} failed: {answer.text[:300]}")
    finally:
        service.send_signal(signal.SIGTERM)
        _, err = service.communicate(timeout=600)
    found = re.findall(r"Collected : (\d+)", err)
    if not found:
        raise RuntimeError(f"callgrind reported no count:\n{err[-2000:]}")
    return int(found[-1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__)
    parser.add_argument("--searches", type=int, default=40, help="searches of the longer run")
    ns = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    few, many = max(1, ns.searches // 4), max(2, ns.searches)
    engines = subprocess.Popen(
        [sys.executable, "-m", "bench.latency_server", "engines", "--delays",
         json.dumps(dict.fromkeys(DELAYS, 0.0))],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        port = _started(engines)
        with tempfile.TemporaryDirectory(prefix="websearch-instructions-") as tmp:
            short, long = count(few, port, Path(tmp)), count(many, port, Path(tmp))
    finally:
        engines.terminate()
        engines.wait()
    per_search = (long - short) / (many - few)
    print(
        f"a fresh search in the server process: {per_search / 1e6:.2f} million instructions "
        f"({many} searches minus {few}; totals {long:,} and {short:,})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

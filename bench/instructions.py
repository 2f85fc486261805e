"""Instructions per fresh search in the real server process, counted by valgrind's callgrind.

    python -m bench.instructions [--searches N] [--engines N]
    python -m bench.instructions --fusion [--calls N]

On a shared machine the time of one run moves by a tenth between runs of the same code; an
instruction count does not, so this is how a change of a few percent is seen. The service runs
as `bench.latency` runs it (`bench.latency_server service`, one worker) under callgrind, the
fake engines in their own process answer at once, and a client sends `web_search` with a new
query each time, one after another, after five to warm up. Two runs, of `N / 4` and `N`
searches: the difference of their totals over the difference of their searches is one search,
with the start and the stop of the process subtracted out. `--engines N` asks only the first N
of the eight engines (`bench.latency --engines`). It needs valgrind (Debian's package);
each run takes about a minute.

`--fusion` counts `rank()` alone, as `bench.rank` calls it (8 engines x 20 results, the engines'
index families, a new query each time): one process parses `N` queries' lists and fuses each,
another only parses them, after the same 20 queries fused to warm up; the difference of their
totals over `N` is one call. String hashes are the same in every run (`PYTHONHASHSEED=0`).
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


def count(searches: int, engines_port: int, workdir: Path, engines: list[str]) -> int:
    """Instructions of one service process that answered `searches` fresh searches (and the
    warm-up's), from its start to its stop."""
    config = workdir / "websearch-mcp.yaml"
    cache = workdir / f"cache-{searches}.sqlite3"
    config.write_text(
        yaml.safe_dump(
            service_config(
                f"http://{HOST}:{engines_port}", cache, "warning", dict.fromkeys(engines, 0.0)
            )
        )
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


def _fusion_run(calls: int, fuse: bool) -> None:
    """What `fusion` counts: the warm-up's queries fused, then `calls` queries' lists parsed and,
    with `fuse`, fused."""
    # Imported here: the service's processes above need none of it.
    from bench.rank import FAMILIES, WARM_UP, engine_lists
    from websearch_mcp.config import SearchSettings
    from websearch_mcp.ranking.pipeline import rank

    search, weights = SearchSettings(), dict.fromkeys(DELAYS, 1.0)
    for i in range(WARM_UP + calls):
        query, lists = engine_lists(i)
        if fuse or i < WARM_UP:
            rank(lists, query, search, weights=weights, families=FAMILIES)


def fusion(calls: int) -> float:
    """Instructions of one `rank()` call (see the module's text)."""
    totals = []
    for mode in ("fuse", "parse"):
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
             "-m", "bench.instructions", "--fusion-run", mode, "--calls", str(calls)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            check=True,
        )  # fmt: skip
        found = re.findall(r"Collected : (\d+)", run.stderr)
        if not found:
            raise RuntimeError(f"callgrind reported no count:\n{run.stderr[-2000:]}")
        totals.append(int(found[-1]))
    return (totals[0] - totals[1]) / calls


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__)
    parser.add_argument("--searches", type=int, default=40, help="searches of the longer run")
    parser.add_argument(
        "--engines", type=int, default=len(DELAYS), help="fake engines (the first N of eight)"
    )
    parser.add_argument("--fusion", action="store_true", help="count rank() alone instead")
    parser.add_argument("--calls", type=int, default=60, help="rank() calls counted (--fusion)")
    parser.add_argument("--fusion-run", choices=("fuse", "parse"), help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if not 1 <= ns.engines <= len(DELAYS):
        parser.error(f"--engines must be 1 to {len(DELAYS)}, not {ns.engines}")
    lineup = list(DELAYS)[: ns.engines]
    if ns.fusion_run:
        _fusion_run(max(1, ns.calls), ns.fusion_run == "fuse")
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    if ns.fusion:
        per_call = fusion(max(1, ns.calls))
        print(
            f"rank() on {len(DELAYS)} engines x 20 results: {per_call / 1e6:.2f} million "
            f"instructions per call ({max(1, ns.calls)} new queries)"
        )
        return 0
    few, many = max(1, ns.searches // 4), max(2, ns.searches)
    engines = subprocess.Popen(
        [sys.executable, "-m", "bench.latency_server", "engines", "--delays",
         json.dumps(dict.fromkeys(lineup, 0.0))],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        port = _started(engines)
        with tempfile.TemporaryDirectory(prefix="websearch-instructions-") as tmp:
            short = count(few, port, Path(tmp), lineup)
            long = count(many, port, Path(tmp), lineup)
    finally:
        engines.terminate()
        engines.wait()
    per_search = (long - short) / (many - few)
    print(
        f"a fresh search of {len(lineup)} engines in the server process: "
        f"{per_search / 1e6:.2f} million instructions "
        f"({many} searches minus {few}; totals {long:,} and {short:,})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

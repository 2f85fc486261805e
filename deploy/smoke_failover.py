"""Losing a replica, for deploy/smoke.sh, with the standard library only: fresh `web_search`
calls of the fake SearXNG through the balancer, from a few clients at once, while a command
(`docker kill` of a replica) runs once the calls are under way.

    python3 smoke_failover.py <base URL> <token> <seconds> <limit> -- <command...>

Prints how many calls were made, how many failed and the slowest; exits 1 when a call failed or
took `limit` seconds or more.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from smoke_call import call  # beside this file

CLIENTS = 3
#: Calls go on this long (or half of a shorter run) before the command runs, so that it finds
#: some in progress.
COMMAND_AFTER = 2.0


def search(base: str, token: str, query: str) -> bool:
    """One fresh search; true when the fake engine's results came back."""
    try:
        result = call(base, token, query).get("result", {})
    except (OSError, ValueError):
        return False
    return not result.get("isError") and bool(result.get("structuredContent", {}).get("results"))


def main(base: str, token: str, seconds: float, limit: float, command: list[str]) -> int:
    started = time.monotonic()
    timings: list[tuple[float, bool]] = []
    lock = threading.Lock()

    def client(number: int) -> None:
        call = 0
        while time.monotonic() - started < seconds:
            call += 1
            begun = time.monotonic()
            ok = search(base, token, f"failover {started} {number} {call}")
            with lock:
                timings.append((time.monotonic() - begun, ok))
            time.sleep(0.05)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    time.sleep(min(COMMAND_AFTER, seconds / 2))
    ran = subprocess.run(command, capture_output=True, text=True, check=False)
    for thread in threads:
        thread.join()
    failed = sum(not ok for _, ok in timings)
    slowest = max(elapsed for elapsed, _ in timings)
    print(f"calls={len(timings)} failed={failed} slowest={slowest:.3f}s")
    if ran.returncode != 0:
        print(f"{command[0]} failed: {ran.stderr.strip()}", file=sys.stderr)
        return 1
    return 0 if failed == 0 and slowest < limit else 1


if __name__ == "__main__":
    if len(sys.argv) < 7 or sys.argv[5] != "--":
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[6:]))

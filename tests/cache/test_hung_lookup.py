"""A Redis whose name never resolves holds no search up.

`testing/hung_lookup.py` runs in a user, mount and network namespace of its own, where
/etc/resolv.conf names a DNS server on 127.0.0.1 that never answers (and /etc/nsswitch.conf asks
only files and DNS): the C library's lookup of the Redis host hangs there, as in a container
without outside DNS, while this machine's own resolver is left alone. Skipped where user
namespaces are not allowed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.shared import REPO

pytest.importorskip("redis", reason="the Redis backend needs the redis extra")

#: The resolver's own wait: each lookup of the Redis host hangs this long, then fails.
RESOLV_CONF = "nameserver 127.0.0.1\noptions timeout:3 attempts:2\n"


def _isolated(tmp_path: Path) -> list[str]:
    """The command that runs a shell in new namespaces with the files above in place."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare (util-linux) is not installed")
    probe = subprocess.run([unshare, "-rmn", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"user namespaces are not allowed here: {probe.stderr.decode().strip()}")
    (tmp_path / "resolv.conf").write_text(RESOLV_CONF)
    (tmp_path / "nsswitch.conf").write_text("hosts: files dns\n")
    mounts = (
        f"mount --bind {tmp_path / 'resolv.conf'} /etc/resolv.conf"
        f" && mount --bind {tmp_path / 'nsswitch.conf'} /etc/nsswitch.conf"
    )
    return [unshare, "-rmn", "sh", "-c", f'{mounts} && exec "$0" -m testing.hung_lookup']


def test_a_redis_whose_name_never_resolves_delays_no_search(tmp_path: Path) -> None:
    command = [*_isolated(tmp_path), sys.executable]
    run = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout)

    assert report["questions"] > 0  # the lookup went to the silent resolver
    usual = max(s["seconds"] for s in report["without_redis"])
    for search in report["redis_unresolvable"]:
        assert search["results"] > 0 and search["searxng"] in ("ok", "irrelevant"), search
        assert search["seconds"] < usual + 0.5, (search, usual)
    ready = report["redis_unresolvable_readyz"]
    assert ready["code"] == 503 and ready["cause"] == "name_lookup"
    assert ready["seconds"] < 0.5

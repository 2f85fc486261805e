"""The extraction worker processes and the order in which jobs get them.

At most `size` jobs run at once, each in its own worker process. Jobs are served shortest-first
without knowing their length, as an operating system's multilevel feedback queue does: a new job
runs at level 0; when its time slice (`SLICE_SECONDS`, doubling with each level) is used up while
another job waits at its level, or at once when a job of a lower level waits, its worker is paused
(SIGSTOP: no work is lost) and the job queued again one level down, to go on where it stopped when
its turn comes. So a small page is never stuck behind documents that take long to read, and a long
document still finishes when nothing else waits. At most twice `size` workers are paused at a time.
A job not done by its deadline has its worker killed: the worker is replaced, the job fails. Workers
are forked from a fork server that has the extractors imported and warmed up (`preload`), so a
replacement is ready in milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import multiprocessing
import os
import shutil
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from websearch_mcp.fetch.job import Job

#: CPU time a job may use before a waiting job of its level goes first (doubles per level).
SLICE_SECONDS = 0.4
#: Paused workers allowed per running one (each holds its memory while paused).
MAX_PAUSED_PER_WORKER = 2
#: How often a running job checks its deadline and whether it must make way.
_CHECK_SECONDS = 0.05

Answer = tuple[str, Any]  # ("ok", Extracted) | ("error", text) | ("memory" | "died" | "timeout", _)


#: Set once this process has started an extraction worker, and so the fork server, whose socket
#: is in multiprocessing's temporary directory of this process.
_FORK_SERVER_STARTED = threading.Event()


def remove_fork_server_dir() -> None:
    """For a process about to end by `os._exit`: remove the directory of the fork server's
    socket, which multiprocessing removes only in its exit handlers. It has no public way to name
    it: `multiprocessing.util.get_temp_dir` is its own helper (the stdio test of a stop signal
    after a page was read fails when that changes), which makes one where there is none: asked
    only once the fork server has started, and never in a child, which shares its parent's."""
    if not _FORK_SERVER_STARTED.is_set() or multiprocessing.parent_process() is not None:
        return
    from multiprocessing import util

    with contextlib.suppress(OSError):  # nothing may keep the process from ending
        shutil.rmtree(util.get_temp_dir(), ignore_errors=True)


def _serve(conn: Connection, memory_bytes: int) -> None:
    """A worker's main function. The extractors are imported here, in the worker (the fork
    server has them already): the server process never needs them."""
    from websearch_mcp.fetch.worker import serve

    serve(conn, memory_bytes)


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, context: Any, memory_bytes: int) -> None:
        self.retiring = False  # said so with its last answer: it exits, takes no more jobs
        self.conn, child = multiprocessing.Pipe()
        self.process: BaseProcess = context.Process(
            target=_serve, args=(child, memory_bytes), daemon=True, name="websearch-extract"
        )
        self.process.start()
        _FORK_SERVER_STARTED.set()
        child.close()

    def call(self, job: Job, seconds: float) -> Answer | None:
        """Send `job` and wait up to `seconds` for the answer; None when it did not come."""
        try:
            self.conn.send(job)
            if not self.conn.poll(max(seconds, 0.0)):
                return None
            status, value, self.retiring = self.conn.recv()
            return (status, value)
        except (EOFError, OSError):
            return ("died", None)

    def signal(self, number: int) -> None:
        pid = self.process.pid
        if pid is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, number)

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()

    def left_on_request(self) -> bool:
        """Whether the worker, its pipe closed, exited of itself (status 0: a stop signal), not
        killed nor crashed."""
        self.process.join(timeout=1)  # it closed its end on the way out
        return self.process.exitcode == 0


@dataclass(eq=False)
class _Ticket:
    job: Job
    deadline: float
    seq: int
    level: int = 0
    worker: _Worker | None = None
    stop_requested: bool = False
    holding: bool = False  # holds one of the `size` running slots
    starting_since: float | None = None  # while a worker is being started for the job
    turn: asyncio.Event = field(default_factory=asyncio.Event)


class ExtractorPool:
    """Up to `size` workers shared by every caller; see the module docstring."""

    def __init__(self, size: int, memory_bytes: int) -> None:
        self.size = size
        self.memory_bytes = memory_bytes
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(["websearch_mcp.fetch.preload"])
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        # One thread per running or paused job waits on its worker's pipe (and starts the
        # worker, which the first time starts the fork server), never on the event loop.
        self._threads = ThreadPoolExecutor(
            (1 + MAX_PAUSED_PER_WORKER) * size, thread_name_prefix="websearch-extract"
        )
        self._running = 0
        self._paused = 0
        self._waiting: list[_Ticket] = []
        self._seq = itertools.count()

    async def run(self, job: Job, deadline: float) -> Answer:
        """The worker's answer for `job`, or ("timeout", None) when `deadline` passed first."""
        ticket = _Ticket(job, deadline, next(self._seq))
        if not await self._take_turn(ticket):
            return ("timeout", None)
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._threads, self._call, ticket)
        started = time.monotonic()
        try:
            while True:
                done, _ = await asyncio.wait({future}, timeout=_CHECK_SECONDS)
                if done:
                    return future.result()
                now = time.monotonic()
                # `starting_since` first: the thread moves the deadline before clearing it.
                if ticket.starting_since is None and now >= ticket.deadline:
                    return await self._abandon(ticket, future)
                if not self._must_yield(ticket, now - started):
                    continue
                # Make way: the worker is paused (not killed: no work is lost) and the job
                # queued again one level down.
                worker = ticket.worker
                assert worker is not None
                worker.signal(signal.SIGSTOP)
                self._release(ticket)
                self._paused += 1
                ticket.level += 1
                try:
                    resumed = await self._take_turn(ticket)
                finally:
                    self._paused -= 1
                if not resumed:
                    return await self._abandon(ticket, future)
                worker.signal(signal.SIGCONT)
                started = time.monotonic()
        except asyncio.CancelledError:  # the caller went away: its job uses no more CPU
            ticket.stop_requested = True
            if ticket.worker is not None:
                ticket.worker.signal(signal.SIGKILL)
            raise
        finally:
            self._release(ticket)

    async def _abandon(self, ticket: _Ticket, future: asyncio.Future[Answer]) -> Answer:
        """Kill the ticket's worker at its deadline (paused or not) and wait for its thread."""
        ticket.stop_requested = True
        if ticket.worker is not None:
            ticket.worker.signal(signal.SIGKILL)
        await future
        return ("timeout", None)

    async def _take_turn(self, ticket: _Ticket) -> bool:
        """Wait until `ticket` may run (a free slot, and first in line); False at its deadline."""
        if self._running < self.size and not self._waiting:
            self._running += 1
            ticket.holding = True
            return True
        ticket.turn.clear()
        self._waiting.append(ticket)
        try:
            async with asyncio.timeout(max(ticket.deadline - time.monotonic(), 0.0)):
                await ticket.turn.wait()
            return True
        except TimeoutError:
            self._leave_line(ticket)
            return False
        except asyncio.CancelledError:  # the caller went away: nobody would release its turn
            self._leave_line(ticket)
            raise

    def _leave_line(self, ticket: _Ticket) -> None:
        """`ticket` stops waiting, and gives back the turn that may have come meanwhile."""
        if ticket in self._waiting:
            self._waiting.remove(ticket)
        self._release(ticket)

    def _release(self, ticket: _Ticket) -> None:
        if ticket.holding:
            ticket.holding = False
            self._running -= 1
            self._hand_on()

    def _hand_on(self) -> None:
        """Give free slots to the waiting jobs, lowest level and oldest first."""
        while self._waiting and self._running < self.size:
            best = min(self._waiting, key=lambda t: (t.level, t.seq))
            self._waiting.remove(best)
            self._running += 1
            best.holding = True
            best.turn.set()

    def _must_yield(self, ticket: _Ticket, used: float) -> bool:
        # At most `MAX_PAUSED_PER_WORKER * size` workers paused: beyond that, waiting jobs wait.
        paused_cap = MAX_PAUSED_PER_WORKER * self.size
        if not self._waiting or ticket.worker is None or self._paused >= paused_cap:
            return False
        lowest = min(t.level for t in self._waiting)
        return lowest < ticket.level or (
            lowest == ticket.level and used >= SLICE_SECONDS * 2**ticket.level
        )

    def _call(self, ticket: _Ticket) -> Answer:
        """In a pool thread: run the job on a worker; once more on a fresh one when the worker
        had left on a stop signal (SIGINT or SIGTERM to the process group: it exits with
        status 0) without reading the job, as one idle, or answering its last, then may."""
        answer, worker = self._call_once(ticket)
        if (
            answer == ("died", None)
            and worker is not None
            and worker.left_on_request()
            and not ticket.stop_requested
            and time.monotonic() < ticket.deadline
        ):
            answer, _ = self._call_once(ticket)
        return answer

    def _call_once(self, ticket: _Ticket) -> tuple[Answer, _Worker | None]:
        """Take an idle worker (or start one), run the job, keep or drop the worker; the answer
        and the worker that gave it."""
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is not None and not worker.process.is_alive():
            worker.stop()
            worker = None
        if worker is None:
            ticket.starting_since = time.monotonic()
            try:
                worker = _Worker(self._context, self.memory_bytes)
            except OSError as err:  # e.g. a TMPDIR too long for the fork server's socket
                ticket.starting_since = None
                return ("error", f"the extraction worker could not start: {str(err)[:200]}"), None
            # Starting a worker (the first one also starts the fork server) is not the job's
            # work: its deadline moves on by that time.
            ticket.deadline += time.monotonic() - ticket.starting_since
            ticket.starting_since = None
        ticket.worker = worker
        if ticket.stop_requested:  # stopped while the worker was starting: it is still fresh
            ticket.worker = None
            with self._lock:
                self._idle.append(worker)
            return ("died", None), None
        answer = worker.call(ticket.job, ticket.deadline - time.monotonic())
        ticket.worker = None
        if (
            answer is None
            or answer[0] == "died"
            or worker.retiring  # it exits now: the next job must not be sent to it
            or not worker.process.is_alive()
        ):
            worker.stop()
            return answer or ("timeout", None), worker
        with self._lock:
            keep = len(self._idle) < self.size
            if keep:
                self._idle.append(worker)
        if not keep:
            worker.stop()
        return answer, worker

    def close(self) -> None:
        """Stop every idle worker (they hold no state worth keeping) and the threads."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            with contextlib.suppress(OSError, ValueError):
                worker.conn.send(None)
            worker.stop()
        self._threads.shutdown(wait=False, cancel_futures=True)

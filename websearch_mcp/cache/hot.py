"""The entries a cache process read or wrote last, kept in memory for a few seconds: a hit on one
needs no trip to the file (see `sqlite`). Bounded by count and by the bytes of their JSON, least
recently used out first, and by the trust window: an entry past it would be read again anyway."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

#: Seconds a remembered entry answers hits without reading the file. Another process sharing the
#: file may replace an entry or its cleanup remove it: this bounds how long this process can miss
#: that, while a popular entry still costs one read every few seconds instead of one per hit.
HOT_TRUST_SECONDS = 2.0
#: Entries kept in memory, and the total size of their stored JSON (a few KiB per answer).
HOT_MAX_ENTRIES = 512
HOT_MAX_BYTES = 8 * 1024 * 1024

Entry = tuple[str, str]  # (namespace, key)


@dataclass(slots=True)
class HotEntry:
    """An entry as last read or written here; `expires_at` counts this process's hits. `raw` is
    its JSON in UTF-8: as text, one emoji or CJK character makes Python keep every character in
    two or four bytes (and a UTF-8 copy besides, once SQLite or orjson has read it), so a page's
    length would say little of the memory it takes."""

    raw: bytes
    stored_at: float
    ttl: float
    expires_at: float
    limit: float  # stored_at + the maximum age: no hit slides the expiry past it
    read_at: float  # when the file last said this


class HotEntries(OrderedDict[Entry, HotEntry]):
    """Remembered entries, least recently used first; `size`, the bytes of their JSON."""

    def __init__(self, clock: Callable[[], float]) -> None:
        super().__init__()
        self.size = 0
        self._clock = clock

    def trusted(self, entry: Entry) -> tuple[HotEntry, float] | None:
        """The entry and the time now, when it is remembered, trusted still and live (and then
        the most recently used); None sends the caller to the file."""
        hot = self.get(entry)
        if hot is None:
            return None
        now = self._clock()
        # A clock set back makes `now - read_at` negative: read the file rather than trust it.
        if not (0.0 <= now - hot.read_at < HOT_TRUST_SECONDS and now < hot.expires_at):
            self.forget(entry)
            return None
        self.move_to_end(entry)
        return hot, now

    def remember(self, entry: Entry, hot: HotEntry) -> None:
        """Keep `hot`, dropping the least recently used beyond the bounds, and those no longer
        trusted: a hit on one would read the file anyway."""
        self.forget(entry)
        if len(hot.raw) > HOT_MAX_BYTES:
            return
        self[entry] = hot
        self.size += len(hot.raw)
        while len(self) > HOT_MAX_ENTRIES or self.size > HOT_MAX_BYTES:
            _, dropped = self.popitem(last=False)
            self.size -= len(dropped.raw)
        # From the least recently used end; a trusted entry there ends the scan, and an untrusted
        # one behind it goes when it is next asked for (`trusted`) or reaches this end.
        now = self._clock()
        while (
            self
            and (oldest := next(iter(self.values()))) is not hot
            and not (0.0 <= now - oldest.read_at < HOT_TRUST_SECONDS)
        ):
            _, dropped = self.popitem(last=False)
            self.size -= len(dropped.raw)

    def forget(self, entry: Entry) -> None:
        hot = self.pop(entry, None)
        if hot is not None:
            self.size -= len(hot.raw)

    def forget_all(self) -> None:
        self.clear()
        self.size = 0

"""Reads a process keeps across requests for as long as PostgreSQL says their rows have not
changed (``docplatform.change_feed``): one home for what a kept read promises, whatever it
keeps (a public endpoint's installation, ``integrations.kept_installations``; a personal API
token with its user, ``docplatform.selectors.api_token_working``).

A ``KeptReads`` keeps, by a key, the instance a read built (with the related instances it
holds) and the changes that make it stale: its *tags*, the feed's ``kind:value`` of each
row it was built from. Each use first asks ``feed.synced()``, after which every change
committed before the request is known here, so a row changed anywhere is read at the very
next request, in every process. The kept instance is never a request's own: each is given a
copy (``copy_of``: instances of its own, as a read would give them, whose values are the kept
ones, shared: a request may set attributes on them, never change a value in place).

Nothing is kept, and every request reads, when the feed cannot vouch (off, SQLite, its
connection lost) or inside a transaction (which may hold writes of its own no other process
sees). A read that began before a change was heard is not kept. At most ``size`` instances
are kept, the least recently used dropped first; a forked child keeps nothing of its
parent's.
"""

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import connections
from django.db.models import Model
from django.db.models.base import ModelState

from .change_feed import EVERYTHING, feed


def copy_of(instance: Model, copies: dict | None = None) -> Model:
    """``instance`` and the related instances it holds (``select_related``'s, those set on
    it), each copied once: new instances, their values the same objects."""
    copies = {} if copies is None else copies
    if id(instance) in copies:
        return copies[id(instance)]
    copy = object.__new__(type(instance))
    copies[id(instance)] = copy
    copy.__dict__ = instance.__dict__.copy()
    copy._state = state = ModelState()
    state.db, state.adding = instance._state.db, instance._state.adding
    related = instance._state.__dict__.get("fields_cache")
    if related:
        state.fields_cache = {
            name: None if held is None else copy_of(held, copies) for name, held in related.items()
        }
    return copy


@dataclass(frozen=True)
class _Kept:
    epoch: int
    instance: Model
    tags: frozenset[str]


class KeptReads:
    def __init__(self, size: int):
        self.size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[object, _Kept] = OrderedDict()
        self._tagged: dict[str, set] = {}  # a change's ``kind:value``: the keys it makes stale
        self._changes = 0  # changes heard: a read that began before one is not kept
        os.register_at_fork(after_in_child=self.forget_in_child)

    def read(
        self,
        key,
        build: Callable[[], Model | None],
        tags: Callable[[Model], Iterable[str]],
        *,
        alias: str,
    ) -> Model | None:
        """What ``build`` reads now from database ``alias`` (None: nothing found), or a copy of
        what it read before under ``key`` when the feed vouches for it; what it reads now is
        kept, stale once a change in ``tags(instance)`` is heard."""
        epoch = None if connections[alias].in_atomic_block else feed.synced()
        if epoch is None:
            return build()
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept.epoch == epoch:
                self._kept.move_to_end(key)
                return copy_of(kept.instance)
            changes = self._changes
        instance = build()
        if instance is None:
            return None
        entry = _Kept(epoch, instance, frozenset(tags(instance)))
        with self._lock:
            if self._changes == changes:
                self._keep(key, entry)
        return copy_of(instance)  # the kept one is never a request's own

    def changed(self, change: str) -> None:
        """The change feed's subscriber: drop what ``change`` (``kind:value``) makes stale."""
        with self._lock:
            self._changes += 1
            if change == EVERYTHING:
                self._forget()
            else:
                for key in list(self._tagged.get(change, ())):
                    self._drop(key)

    def forget_in_child(self) -> None:
        """In a forked child: nothing of the parent's (its lock may have been held)."""
        self._lock = threading.Lock()
        self._forget()

    # With the lock held:

    def _keep(self, key, entry: _Kept) -> None:
        self._drop(key)
        self._kept[key] = entry
        for tag in entry.tags:
            self._tagged.setdefault(tag, set()).add(key)
        while len(self._kept) > self.size:
            self._drop(next(iter(self._kept)))

    def _drop(self, key) -> None:
        entry = self._kept.pop(key, None)
        if entry is None:
            return
        for tag in entry.tags:
            keys = self._tagged.get(tag)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._tagged[tag]

    def _forget(self) -> None:
        self._kept, self._tagged = OrderedDict(), {}

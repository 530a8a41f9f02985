"""The installations public endpoints' calls read, kept by each process for as long as
PostgreSQL says they have not changed (``docplatform.change_feed``).

A public endpoint's request read its installation, its integration, its organization
installation and their selected spaces in one statement each time (``endpoint_selectors``):
under load, with PostgreSQL's share, about a tenth of the CPU a request costs. Here the
installation that statement built (with its integration, the versions it may run and its
organization installation) is kept, and each call is given a copy of it: instances of its
own, as a read would give it (a call may set attributes on them, or read a deferred field),
whose values are the kept ones, shared: the call path never changes a value in place (the
kept versions' values are shared so too, ``endpoint_selectors``). The credentials are kept
decrypted, as the kept versions' secrets are: the process holds the keys that decrypt them.
Building the instances again from the kept rows, each JSON value parsed and each secret
decrypted, was a tenth of a web process's CPU under load; a copy is a few dictionaries. The
kept instances are used again while the feed vouches for them: each use first asks
``feed.synced()``, after which every change committed before the request is known here, so a
paused, resumed, reconfigured or uninstalled installation, a changed space selection or a
newly released version is read at the very next request, in every process. Changes reach
this module as ``installation:ID`` (the installation's row, or its selected spaces; it drops
what it keeps of that installation and of the installations below it) and ``integration:ID``
(what it keeps of that integration's installations).

Nothing is kept, and every request reads, when the feed cannot vouch (off, SQLite, its
connection lost) or inside a transaction (which may hold writes of its own no other process
sees).
"""

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connections
from django.db.models import Model
from django.db.models.base import ModelState

from docplatform.change_feed import EVERYTHING, feed
from docplatform.queries import Prepared

#: How many installations a process keeps read (four instances of about 60 values each, the
#: versions' values shared with ``endpoint_selectors``' kept versions).
KEPT = 2048


@dataclass(frozen=True)
class _Kept:
    epoch: int
    installation: Model
    integration_id: str
    parent_id: str | None


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


class KeptInstallations:
    def __init__(self):
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        # The kept installations of each integration, and below each organization
        # installation: a change drops them without a walk of everything kept.
        self._of_integration: dict[str, set[str]] = {}
        self._below: dict[str, set[str]] = {}
        self._changes = 0  # changes heard: a read that began before one is not kept

    def installation(
        self,
        prepared: Prepared,
        values: dict,
        installation_id: str,
        build: Callable[[list[list]], Model | None],
    ) -> Model | None:
        """What ``build`` makes of the rows ``prepared`` returns for ``values`` (the read of
        installation ``installation_id``; None: none found): a copy of the one kept when the
        feed vouches for it, else built from rows read now (and kept, when the feed vouched
        before the read and nothing changed while it was read)."""
        epoch = None if connections[prepared.alias].in_atomic_block else feed.synced()
        if epoch is None:
            return build(prepared.execute(values))
        with self._lock:
            kept = self._kept.get(installation_id)
            if kept is not None and kept.epoch == epoch:
                self._kept.move_to_end(installation_id)
                return copy_of(kept.installation)
            changes = self._changes
        installation = build(prepared.execute(values))
        if installation is None:
            return None
        entry = _Kept(epoch, installation, installation.integration_id, installation.parent_id)
        with self._lock:
            if self._changes == changes:
                self._keep(installation_id, entry)
        return copy_of(installation)  # the kept one is never a call's own

    # With the lock held:

    def _keep(self, pk: str, entry: _Kept) -> None:
        self._drop(pk)
        self._kept[pk] = entry
        self._of_integration.setdefault(entry.integration_id, set()).add(pk)
        if entry.parent_id is not None:
            self._below.setdefault(entry.parent_id, set()).add(pk)
        while len(self._kept) > KEPT:
            self._drop(next(iter(self._kept)))

    def _drop(self, pk: str) -> None:
        entry = self._kept.pop(pk, None)
        if entry is None:
            return
        for index, key in (
            (self._of_integration, entry.integration_id),
            (self._below, entry.parent_id),
        ):
            if key is not None and (pks := index.get(key)) is not None:
                pks.discard(pk)
                if not pks:
                    del index[key]

    def changed(self, change: str) -> None:
        """The change feed's subscriber (``integrations.apps``)."""
        kind, _, key = change.partition(":")
        with self._lock:
            self._changes += 1
            if change == EVERYTHING:
                self._forget()
            elif kind == "installation":
                for pk in [key, *self._below.get(key, ())]:
                    self._drop(pk)
            elif kind == "integration":
                for pk in list(self._of_integration.get(key, ())):
                    self._drop(pk)

    def _forget(self) -> None:
        self._kept, self._of_integration, self._below = OrderedDict(), {}, {}

    def forget_in_child(self) -> None:
        """In a forked child: nothing of the parent's (its lock may have been held)."""
        self._lock = threading.Lock()
        self._forget()


kept_installations = KeptInstallations()
os.register_at_fork(after_in_child=kept_installations.forget_in_child)

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

What a kept read promises, and when nothing is kept (the feed off, SQLite, inside a
transaction), is ``docplatform.kept_reads``'.
"""

from django.db.models import Model

from docplatform.kept_reads import KeptReads

#: How many installations a process keeps read (four instances of about 60 values each, the
#: versions' values shared with ``endpoint_selectors``' kept versions).
KEPT = 2048


def installation_tags(installation: Model) -> list[str]:
    """The changes that make a kept installation stale: its own row's or its selected spaces'
    (``installation:ID``), its organization installation's, its integration's."""
    tags = [f"installation:{installation.pk}", f"integration:{installation.integration_id}"]
    if installation.parent_id is not None:
        tags.append(f"installation:{installation.parent_id}")
    return tags


kept_installations = KeptReads(KEPT)

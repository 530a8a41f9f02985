"""A space's content (README, "Spaces of any size"): how many pages a space may hold, how
large a request writing a whole revision of them may be, and the language search indexes its
pages in."""

import re

from django.core.exceptions import ImproperlyConfigured

from .environment import env, env_positive

# The pages one revision of a space holds; a write that would pass it is refused naming it.
SPACE_MAX_PAGES = env_positive(int, "SPACE_MAX_PAGES", 10_000)
# A request that writes a whole revision (POST /api/v1/spaces/{id}/revisions/) may carry this
# many bytes of JSON: 4 KiB a page by default, so a space at its page limit can be written in
# one request; every other request keeps Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB), which
# one page (at most 512 KiB of Markdown) stays within.
REVISION_MAX_BYTES = env_positive(int, "REVISION_MAX_BYTES", SPACE_MAX_PAGES * 4096)
# The text search configuration a new space's pages are indexed and searched with on
# PostgreSQL (README, "Search"): a name pg_ts_config holds (english, german, simple...),
# checked there when a space's is set (``search_index.space_search_language_set``). SQLite's
# index stems English words whatever it says.
SEARCH_LANGUAGE = env.str("SEARCH_LANGUAGE", default="english").strip()
if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", SEARCH_LANGUAGE):
    raise ImproperlyConfigured(
        "SEARCH_LANGUAGE must be the name of a PostgreSQL text search configuration, such as "
        f"english or simple, not {SEARCH_LANGUAGE!r}"
    )

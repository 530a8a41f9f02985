"""A space's content (README, "Spaces of any size"): how many pages a space may hold, and how
large a request writing a whole revision of them may be."""

from .environment import env_positive

# The pages one revision of a space holds; a write that would pass it is refused naming it.
SPACE_MAX_PAGES = env_positive(int, "SPACE_MAX_PAGES", 10_000)
# A request that writes a whole revision (POST /api/v1/spaces/{id}/revisions/) may carry this
# many bytes of JSON: 4 KiB a page by default, so a space at its page limit can be written in
# one request; every other request keeps Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB), which
# one page (at most 512 KiB of Markdown) stays within.
REVISION_MAX_BYTES = env_positive(int, "REVISION_MAX_BYTES", SPACE_MAX_PAGES * 4096)

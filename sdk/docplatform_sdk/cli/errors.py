"""How a command ends: exit 0 done, 1 refused, 2 a usage error."""

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad arguments, or a path or env file that does not exist (exit 2)."""


class Refused(Exception):
    """The manifest, the platform or the token refused (exit 1); details are printed already."""

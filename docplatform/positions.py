"""Where a page stands among its space's pages: a key that sorts as text, so that a page can be
put between two others by writing that page alone (a fractional index, as Figma's and Linear's
lists order their items), never by renumbering the pages after it.

A key is the digits of a decimal fraction between 0 and 1 without its "0." and without a
trailing zero ("5" is 0.5, "05" is 0.05): two keys compare as text (digits only, so every
database collation agrees) exactly as their fractions compare, and between any two there is
always a third. Pure functions: the page services and the migration that introduced the keys
both use them."""

from bisect import bisect_left


def key_between(low: str | None, high: str | None) -> str:
    """A key after ``low`` and before ``high`` (None: the start and the end of the list)."""
    return _midpoint(*_bounds(low, high))


def keys_between(low: str | None, high: str | None, count: int) -> list[str]:
    """``count`` keys in order after ``low`` and before ``high``, spread by halving the gap
    (so that their length grows with the logarithm of ``count``)."""
    return _spread(*_bounds(low, high), count)


def _bounds(low: str | None, high: str | None) -> tuple[str, str | None]:
    """The interval new keys are taken from. Between two keys, the whole gap; after the last
    (or before the first) key, a small part of the gap next to it: pages are added at the end
    one after another, and halving the rest of the list's range each time would lengthen the
    keys by a digit every three pages, where a 128th of it takes a hundred pages."""
    low = low or ""
    if high is not None and low >= high:
        raise ValueError(f"{low!r} is not before {high!r}")
    if low and high is None:
        scale = len(low) + 3
        after = int(low) * 1000
        return low, _digits(after + (10**scale - after) // 128, scale)
    if not low and high is not None:
        scale = len(high) + 3
        before = int(high) * 1000
        return _digits(before - before // 128, scale), high
    return low, high


def _digits(value: int, scale: int) -> str:
    """The key of the fraction ``value / 10**scale``."""
    return str(value).zfill(scale).rstrip("0")


def _spread(low: str, high: str | None, count: int) -> list[str]:
    if count <= 0:
        return []
    middle = _midpoint(low, high)
    before = (count - 1) // 2
    return [*_spread(low, middle, before), middle, *_spread(middle, high, count - 1 - before)]


def _midpoint(low: str, high: str | None) -> str:
    """The shortest key (nearly) halfway between ``low`` and ``high`` (None: 1)."""
    if high is not None:
        shared = 0  # the leading digits both fractions have (a missing digit of low is 0)
        while shared < len(high) and (low[shared : shared + 1] or "0") == high[shared]:
            shared += 1
        if shared:
            return high[:shared] + _midpoint(low[shared:], high[shared:])
    low_digit = int(low[0]) if low else 0
    high_digit = int(high[0]) if high is not None else 10
    if high_digit - low_digit > 1:
        return str((low_digit + high_digit + 1) // 2)
    if high is not None and len(high) > 1:
        return high[0]  # high's first digit alone is after low and before high
    return str(low_digit) + _midpoint(low[1:], None)


def keys_for(order: list[str], kept: dict[str, str]) -> dict[str, str]:
    """A key for each of ``order`` (paths, in the order wanted), keeping the key of as many as
    possible of the paths ``kept`` holds (path -> its key now): those whose keys already
    follow the wanted order (the longest such run); the others get new keys between their
    neighbours. Writing a list with one page moved thus writes that page alone."""
    candidates = [(index, kept[path]) for index, path in enumerate(order) if path in kept]
    fixed = {order[index]: key for index, key in _longest_increasing(candidates)}
    keys: dict[str, str] = {}
    waiting: list[str] = []
    previous: str | None = None
    for path in order:
        if path not in fixed:
            waiting.append(path)
            continue
        keys.update(zip(waiting, keys_between(previous, fixed[path], len(waiting)), strict=True))
        waiting = []
        previous = keys[path] = fixed[path]
    keys.update(zip(waiting, keys_between(previous, None, len(waiting)), strict=True))
    return keys


def _longest_increasing(items: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The longest subsequence of ``items`` whose keys strictly increase (patience sorting)."""
    tails: list[str] = []  # the smallest last key of an increasing run of each length
    tail_at: list[int] = []  # the item ending it
    before: list[int] = []  # each item's predecessor in its best run (-1: none)
    for at, (_, key) in enumerate(items):
        length = bisect_left(tails, key)
        if length == len(tails):
            tails.append(key)
            tail_at.append(at)
        else:
            tails[length] = key
            tail_at[length] = at
        before.append(tail_at[length - 1] if length else -1)
    run: list[tuple[int, str]] = []
    at = tail_at[-1] if tail_at else -1
    while at != -1:
        run.append(items[at])
        at = before[at]
    return run[::-1]

"""Three-way merges of a space's pages (DESIGN.md, "Content"): two people's changes made from
one revision are merged per page, line by line, against their common base. What does not
overlap is kept from both with no question; what overlaps is a *hunk*, which a person resolves
(theirs, mine, both, or their own text) before anything is written.

Lines are matched by ``merge3`` (Breezy's three-way merge, the same algorithm family as
``git merge-file``; ``tests/docplatform/test_merging.py`` holds them to git's answers).
"""

from dataclasses import dataclass, field

from merge3 import Merge3

#: How a person resolves one hunk.
CHOICES = ("theirs", "mine", "both", "edit")


@dataclass(frozen=True)
class Hunk:
    """Lines both sides changed: as they were (``base``), and as each side left them."""

    base: str
    theirs: str
    mine: str

    def as_json(self) -> dict:
        return {"base": self.base, "theirs": self.theirs, "mine": self.mine}

    def resolved(self, choice: str, text: str = "") -> str:
        if choice == "theirs":
            return self.theirs
        if choice == "mine":
            return self.mine
        if choice == "both":
            joint = "" if not self.theirs or self.theirs.endswith("\n") else "\n"
            return self.theirs + joint + self.mine
        if choice == "edit":
            return text
        raise ValueError(f"a hunk is resolved with one of {', '.join(CHOICES)}")


@dataclass
class TextMerge:
    """A text merged: in order, agreed text (a string) and hunks."""

    parts: list = field(default_factory=list)

    @property
    def hunks(self) -> list[Hunk]:
        return [part for part in self.parts if isinstance(part, Hunk)]

    @property
    def clean(self) -> bool:
        return not self.hunks

    def text(self, resolutions: list[tuple[str, str]] | None = None) -> str:
        """The merged text, each hunk resolved by ``resolutions`` ((choice, text) in order);
        ValueError when a hunk has no resolution."""
        resolutions = list(resolutions or [])
        if len(resolutions) < len(self.hunks):
            raise ValueError("every overlapping change needs a choice")
        out, index = [], 0
        for part in self.parts:
            if isinstance(part, Hunk):
                out.append(part.resolved(*resolutions[index]))
                index += 1
            else:
                out.append(part)
        return "".join(out)


def merge_text(base: str, theirs: str, mine: str) -> TextMerge:
    """``theirs`` and ``mine``, both made from ``base``, merged line by line. Line endings are
    compared as ``\n`` (a browser sends a textarea's lines ending in ``\r\n``), and the
    merge ends its lines so."""
    base, theirs, mine = (text.replace("\r\n", "\n") for text in (base, theirs, mine))
    merge = TextMerge()
    if theirs == mine:
        merge.parts.append(theirs)
        return merge
    groups = Merge3(base.splitlines(True), theirs.splitlines(True), mine.splitlines(True))
    for group in groups.merge_groups():
        if group[0] == "conflict":
            _, base_lines, their_lines, my_lines = group
            merge.parts.append(Hunk("".join(base_lines), "".join(their_lines), "".join(my_lines)))
            continue
        text = "".join(group[1])
        if merge.parts and isinstance(merge.parts[-1], str):
            merge.parts[-1] += text
        else:
            merge.parts.append(text)
    return merge


@dataclass
class PageClash:
    """A page both sides changed where the changes overlap: its title, its condition (a
    value, merged as the title is), or lines of its body, or one side deleted it while the
    other changed it (``deleted_by``)."""

    path: str
    title: Hunk | None = None
    body: TextMerge | None = None
    deleted_by: str = ""
    condition: Hunk | None = None

    def hunks(self) -> list[dict]:
        """The hunks as the API shows them: title first, then the condition, the body's."""
        found = []
        if self.title is not None:
            found.append({"field": "title", **self.title.as_json()})
        if self.condition is not None:
            found.append({"field": "condition", **self.condition.as_json()})
        for hunk in self.body.hunks if self.body is not None else []:
            found.append({"field": "body", **hunk.as_json()})
        return found

    def as_json(self) -> dict:
        answer = {"page": self.path, "hunks": self.hunks()}
        if self.deleted_by:
            answer["deletedBy"] = self.deleted_by
        return answer


def merge_page(base: dict, theirs: dict, mine: dict) -> tuple[dict | None, PageClash | None]:
    """One page ({path, title, body, condition}) changed by both sides from ``base``: the
    merged page, or what overlaps. The condition merges as the title does: the side that
    changed it wins, both changing it differently overlap."""
    clash = PageClash(path=mine["path"])
    title = _merge_value(base["title"], theirs["title"], mine["title"])
    if title is None:
        clash.title = Hunk(base["title"], theirs["title"], mine["title"])
    conditions = [_condition(page) for page in (base, theirs, mine)]
    condition = _merge_value(*conditions)
    if condition is None:
        clash.condition = Hunk(*conditions)
    body = merge_text(base["body"], theirs["body"], mine["body"])
    if not body.clean:
        clash.body = body
    if clash.title is not None or clash.condition is not None or clash.body is not None:
        return None, clash
    merged = {"path": mine["path"], "title": title, "body": body.text()}
    return merged | ({"condition": condition} if condition else {}), None


def _condition(page: dict) -> str:
    condition = page.get("condition")
    return condition if isinstance(condition, str) else ""


def _merge_value(base, theirs, mine):
    """A value each side may have changed: the one that changed it, or None when both did,
    differently."""
    if theirs == mine or mine == base:
        return theirs
    if theirs == base:
        return mine
    return None


def merge_pages(
    base: list[dict], theirs: list[dict], mine: list[dict], *, theirs_unordered: bool = False
) -> tuple[list[dict], list[PageClash]]:
    """Two versions of a space's pages made from ``base``, merged page by page: the pages
    (in theirs' order, or mine's when theirs kept the base's order, pages only mine added
    after the page before them in mine) and the pages where the changes overlap. With
    ``theirs_unordered`` (theirs are a Git branch's files, whose order means nothing), mine's
    order, and pages only theirs added after them by path."""
    base_by, theirs_by, mine_by = (_by_path(pages) for pages in (base, theirs, mine))
    merged: dict[str, dict] = {}
    clashes: list[PageClash] = []
    for path in {**theirs_by, **mine_by}:
        page, clash = _merged_page(base_by.get(path), theirs_by.get(path), mine_by.get(path), path)
        if clash is not None:
            clashes.append(clash)
        elif page is not None:
            merged[path] = page
    theirs_kept_order = theirs_unordered or [p["path"] for p in theirs if p["path"] in base_by] == [
        p["path"] for p in base if p["path"] in theirs_by
    ]
    skeleton, other = (mine, theirs) if theirs_kept_order else (theirs, mine)
    if theirs_unordered:
        other = sorted(other, key=lambda page: page["path"])
        ordered = [merged[p["path"]] for p in skeleton if p["path"] in merged]
        placed = {page["path"] for page in ordered}
        added = [merged[p["path"]] for p in other if p["path"] in merged.keys() - placed]
        return ordered + added, clashes
    ordered = [merged[p["path"]] for p in skeleton if p["path"] in merged]
    for index, page in enumerate(other):
        if page["path"] in merged and all(p["path"] != page["path"] for p in ordered):
            before = [p["path"] for p in other[:index]]
            at = max((i + 1 for i, p in enumerate(ordered) if p["path"] in before), default=0)
            ordered.insert(at, merged[page["path"]])
    return ordered, clashes


def placed_after(pages: list[dict], order: list[dict], page: dict) -> list[dict]:
    """``pages`` with ``page`` put back after the page that precedes it in ``order`` (the
    nearest one still among ``pages``), or first when none does: where a restored or
    resolved page goes."""
    present = {existing["path"] for existing in pages}
    index = next((i for i, p in enumerate(order) if p["path"] == page["path"]), len(order))
    before = next((p["path"] for p in reversed(order[:index]) if p["path"] in present), None)
    at = next((i + 1 for i, p in enumerate(pages) if p["path"] == before), 0)
    return [*pages[:at], page, *pages[at:]]


def _merged_page(base, theirs, mine, path) -> tuple[dict | None, PageClash | None]:
    if theirs is None and mine is None:
        return None, None
    if base is None:  # added on one side, or on both
        if theirs is None or mine is None or theirs == mine:
            return theirs or mine, None
        return merge_page({"path": path, "title": "", "body": "", "condition": ""}, theirs, mine)
    if theirs is None or mine is None:  # deleted on one side
        kept, deleted_by = (mine, "theirs") if theirs is None else (theirs, "mine")
        if kept == base:
            return None, None
        sides = (theirs or {}).get("body", ""), (mine or {}).get("body", "")
        hunk = Hunk(base["body"], *sides)
        return None, PageClash(path=path, body=TextMerge([hunk]), deleted_by=deleted_by)
    return merge_page(base, theirs, mine)


def _by_path(pages: list[dict]) -> dict[str, dict]:
    return {page["path"]: _as_page(page) for page in pages}


def _as_page(page: dict) -> dict:
    """{path, title, body}, and its condition when it has one."""
    condition = _condition(page)
    kept = {"path": page["path"], "title": page["title"], "body": page.get("body", "")}
    return kept | ({"condition": condition} if condition else {})

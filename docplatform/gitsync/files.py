"""A page as a Markdown file, and back: ``<page path>.md`` holding YAML front matter with the
page's title (and its condition, when it has one: adaptive content), then the page's Markdown
as it is stored::

    ---
    title: Install the tool
    condition: visitor.claims.plan in ["pro", "team"]
    ---
    # Requirements
    ...

Reading a file written here gives the page back exactly. A file without front matter (or
without a title in it) takes its title from its first ``# `` heading, else from its name.
Front matter comes from whoever pushed to the branch: it is read by the SDK's limited loader
(size, depth, aliases), and a file it refuses is skipped with the reason, as is a file whose
condition (or an adaptive section's) cannot be parsed.
"""

import re
from dataclasses import dataclass

import yaml
from docplatform_sdk.manifest.yamlload import FRONT_MATTER_LIMITS, load_limited_yaml

from ..content import MAX_PAGE_BYTES, MAX_TITLE_LENGTH, page_condition_problem, page_path_problem
from ..markdown import adaptive_problems

SUFFIX = ".md"
FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
FIRST_HEADING = re.compile(r"^# +(.+?)[ \t]*#*[ \t]*$", re.M)


def file_path(page_path: str) -> str:
    return page_path + SUFFIX


def page_path_of(file_path: str) -> str | None:
    """The page a file of the branch stands for (None: not a Markdown file)."""
    return file_path[: -len(SUFFIX)] if file_path.endswith(SUFFIX) else None


def is_page_file(file_path: str) -> bool:
    """Whether the file names a page (a Markdown file whose path is a page path): what an
    export rewrites or deletes, and an import reads. Other files are left as they are."""
    page_path = page_path_of(file_path)
    return page_path is not None and page_path_problem(page_path) is None


def page_file(page: dict) -> bytes:
    """The file of a page ({path, title, body}, and its condition when it has one)."""
    fields = {"title": page["title"]}
    if page.get("condition"):
        fields["condition"] = page["condition"]
    front_matter = yaml.safe_dump(fields, allow_unicode=True, sort_keys=False, width=1_000_000)
    return f"---\n{front_matter}---\n{page['body']}".encode()


@dataclass(frozen=True)
class Skipped:
    """A Markdown file an import leaves out, and why (``GitSync.skipped``)."""

    path: str
    reason: str

    def as_json(self) -> dict:
        return {"path": self.path, "reason": self.reason}


def page_from_file(path: str, data: bytes) -> dict | Skipped:
    """The page ({path, title, body}) a Markdown file of the branch holds, or why it is
    skipped: not a page path, over ``MAX_PAGE_BYTES``, not UTF-8, no valid front matter."""
    page_path = page_path_of(path)
    problem = page_path_problem(page_path)
    if problem:
        return Skipped(path, f"not a page path: {problem}")
    if len(data) > MAX_PAGE_BYTES:
        return Skipped(path, f"over {MAX_PAGE_BYTES // 1024} KiB ({len(data)} bytes)")
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        return Skipped(path, f"not valid UTF-8 (byte {error.start})")
    if "\x00" in text:
        return Skipped(path, "holds a NUL character")
    title, body, condition = "", text, ""
    front = FRONT_MATTER.match(text)
    if front:
        loaded = load_limited_yaml(front.group(1), path, FRONT_MATTER_LIMITS)
        if loaded.errors:
            return Skipped(path, f"its front matter: {loaded.errors[0].message}")
        fields = loaded.document
        if fields is not None and not isinstance(fields, dict):
            return Skipped(path, "its front matter is not a mapping (title: ...)")
        title = (fields or {}).get("title")
        if isinstance(title, bool) or not isinstance(title, str | int | float | type(None)):
            return Skipped(path, "its title is not text (title: ... holds a list or a mapping)")
        title = str(title or "").strip()
        condition = (fields or {}).get("condition")
        problem = page_condition_problem(condition)
        if problem:
            return Skipped(path, f"its condition {problem}")
        condition = (condition or "").strip()
        body = text[front.end() :]
    problems = adaptive_problems(body)
    if problems:
        return Skipped(path, f"its {problems[0]}")
    if not title:
        heading = FIRST_HEADING.search(body)
        title = heading.group(1).strip() if heading else page_path.rsplit("/", 1)[-1]
    if len(title) > MAX_TITLE_LENGTH:
        return Skipped(path, f"its title is longer than {MAX_TITLE_LENGTH} characters")
    page = {"path": page_path, "title": title, "body": body}
    return page | ({"condition": condition} if condition else {})

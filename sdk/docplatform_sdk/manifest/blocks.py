"""``blocks`` and ``externalLinks``: the blocks an integration draws and the links it lists."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from .base import BLOCK_ID_RE, CheckerBase, describe, index, join, shown
from .constants import (
    BLOCK_KEYS,
    BLOCK_OPTIONAL_KEYS,
    EXTERNAL_LINK_KEYS,
    MAX_DESCRIPTION_LENGTH,
    MAX_IDENTIFIER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_TITLE_LENGTH,
    MAX_URL_LENGTH,
)


class BlockChecks(CheckerBase):
    def check_blocks(self, value: Any, path: str) -> tuple[dict, ...] | None:
        items = self.sequence(value, path, "a list of blocks")
        if items is None:
            return None
        blocks: list[dict] = []
        first: dict[str, int] = {}
        ok = True
        for position, item in enumerate(items):
            where = index(path, position)
            block = self.mapping(item, where, "a mapping with id, title and description")
            if block is None:
                ok = False
                continue
            before = len(self.errors)
            self.keys(block, where, BLOCK_KEYS + BLOCK_OPTIONAL_KEYS, BLOCK_KEYS)
            block_id = None
            if "id" in block:
                block_id = self.string(
                    block["id"], join(where, "id"), max_length=MAX_IDENTIFIER_LENGTH
                )
                if block_id is not None and not BLOCK_ID_RE.fullmatch(block_id):
                    self.error(
                        join(where, "id"),
                        "must be letters and digits in words joined by '-' or '_', such as "
                        f"'code-block'; found {shown(block_id)}",
                    )
                elif block_id is not None and block_id in first:
                    self.error(
                        join(where, "id"),
                        f"{block_id!r} is already the id of {index(path, first[block_id])}",
                    )
                elif block_id is not None:
                    first[block_id] = position
            if "title" in block:
                self.string(block["title"], join(where, "title"), max_length=MAX_TITLE_LENGTH)
            if "description" in block:
                self.string(
                    block["description"],
                    join(where, "description"),
                    max_length=MAX_DESCRIPTION_LENGTH,
                )
            if "visitors" in block and not isinstance(block["visitors"], bool):
                self.error(
                    join(where, "visitors"),
                    "must be true (a published site's visitors may press the block's buttons) "
                    f"or false, found {describe(block['visitors'])}",
                )
            if len(self.errors) > before:
                ok = False
            else:
                checked = {key: block[key] for key in BLOCK_KEYS}
                if block.get("visitors") is True:
                    checked["visitors"] = True
                blocks.append(checked)
        return tuple(blocks) if ok else None

    def check_externalLinks(self, value: Any, path: str) -> tuple[dict, ...] | None:
        items = self.sequence(value, path, "a list of links")
        if items is None:
            return None
        links: list[dict] = []
        ok = True
        for position, item in enumerate(items):
            where = index(path, position)
            link = self.mapping(item, where, "a mapping with label and url")
            if link is None:
                ok = False
                continue
            before = len(self.errors)
            self.keys(link, where, EXTERNAL_LINK_KEYS, EXTERNAL_LINK_KEYS)
            if "label" in link:
                self.string(link["label"], join(where, "label"), max_length=MAX_LABEL_LENGTH)
            if "url" in link:
                self.http_url(link["url"], join(where, "url"))
            if len(self.errors) > before:
                ok = False
            else:
                links.append({"label": link["label"], "url": link["url"]})
        return tuple(links) if ok else None

    def http_url(self, value: Any, path: str) -> str | None:
        text = self.string(value, path, max_length=MAX_URL_LENGTH)
        if text is None:
            return None
        try:
            parts = urlsplit(text)
            valid = (
                parts.scheme in ("http", "https")
                and bool(parts.hostname)
                and not re.search(r"\s", text)
            )
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError:
            valid = False
        if not valid:
            self.error(
                path,
                "must be an absolute http:// or https:// URL, such as "
                f"'https://example.com/docs'; found {shown(text)}",
            )
            return None
        return text

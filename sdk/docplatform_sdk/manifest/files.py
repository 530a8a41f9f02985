"""The files a manifest names: ``script`` (and the Python files it imports), ``icon`` and
``previewImages``, looked up in the integration folder.
"""

from __future__ import annotations

from typing import Any

from .. import codebundle
from . import assets as asset_checks
from .base import CheckerBase, index
from .constants import MAX_PREVIEW_IMAGES
from .types import Asset


class FileChecks(CheckerBase):
    def check_script(self, value: Any, path: str) -> Asset | None:
        text = self.string(value, path)
        if text is None:
            return None
        script = self.collect(asset_checks.check_script(self.root, text, path))
        if script is not None and self.root is not None:
            try:
                self.values["code"] = codebundle.collect(self.root, script.path)
            except (codebundle.BundleError, OSError) as error:
                self.error(path, f"the integration's Python files: {error}")
                return None
        return script

    def check_icon(self, value: Any, path: str) -> Asset | None:
        text = self.string(value, path)
        if text is None:
            return None
        return self.collect(asset_checks.check_image(self.root, text, path, preview=False))

    def check_previewImages(self, value: Any, path: str) -> tuple[Asset, ...] | None:
        items = self.sequence(value, path, "a list of image paths")
        if items is None:
            return None
        if len(items) > MAX_PREVIEW_IMAGES:
            self.error(path, f"lists {len(items)} images; at most {MAX_PREVIEW_IMAGES} are allowed")
            return None
        images: list[Asset] = []
        ok = True
        for position, item in enumerate(items):
            where = index(path, position)
            text = self.string(item, where)
            if text is None:
                ok = False
                continue
            asset = self.collect(asset_checks.check_image(self.root, text, where, preview=True))
            if asset is None:
                ok = False
            else:
                images.append(asset)
        return tuple(images) if ok else None

    def collect(self, report: asset_checks.AssetReport) -> Asset | None:
        self.errors.extend(report.errors)
        self.warnings.extend(report.warnings)
        return report.asset

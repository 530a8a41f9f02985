"""Regenerate ``corpus_expected.json`` from the checker's current judgement of the corpus.

    .venv/bin/python sdk/tests/manifest/update_corpus_expected.py

Then read the diff: every line is a judgement on a real manifest and must be right (a correct
refusal with an actionable reason), not a checker bug frozen into the expectations.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # sdk/tests

from manifest.corpus import EXPECTED, corpus_files, outcome


def main() -> int:
    files = corpus_files()
    if not files:
        print("corpus not found", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        expected = {path.name: outcome(path, Path(tmp) / path.stem) for path in files}
    EXPECTED.write_text(json.dumps(expected, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    accepted = sum(entry["accepted"] for entry in expected.values())
    print(f"wrote {EXPECTED}: {len(expected)} files, {accepted} accepted")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The three-way merge of a page's lines (``merging``) held to ``git merge-file`` on a
corpus of cases: where git merges cleanly, the merge gives git's text; where git finds a
conflict, the merge finds one too. Then what a page merge adds on top: titles, pages added and
deleted on one side, the order of pages, and resolving hunks."""

import itertools
import subprocess

import pytest

from docplatform.merging import Hunk, merge_pages, merge_text

BASE = [f"line {n}\n" for n in range(1, 13)]


def replace(lines, at, text):
    return [*lines[:at], text, *lines[at + 1 :]]


def insert(lines, at, text):
    return [*lines[:at], text, *lines[at:]]


def delete(lines, at):
    return [*lines[:at], *lines[at + 1 :]]


#: One side's edit of BASE, by name.
EDITS = {
    "replace 2": lambda: replace(BASE, 1, "line two, theirs or mine\n"),
    "replace 3": lambda: replace(BASE, 2, "line three, changed\n"),
    "replace 10": lambda: replace(BASE, 9, "line ten, changed\n"),
    "insert at 0": lambda: insert(BASE, 0, "a new first line\n"),
    "insert at 6": lambda: insert(BASE, 6, "a line in the middle\n"),
    "append": lambda: [*BASE, "a last line\n"],
    "delete 5": lambda: delete(BASE, 4),
    "delete 11": lambda: delete(BASE, 10),
    "no change": lambda: list(BASE),
}


def git_merge_file(base: str, theirs: str, mine: str, tmp_path) -> tuple[bool, str]:
    """(whether git merged cleanly, its text)."""
    files = {}
    for name, text in (("base", base), ("theirs", theirs), ("mine", mine)):
        files[name] = tmp_path / name
        files[name].write_text(text)
    result = subprocess.run(
        ["git", "merge-file", "-p", files["mine"], files["base"], files["theirs"]],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode >= 0, result.stderr
    return result.returncode == 0, result.stdout


def cases():
    """Every pair of edits (theirs, mine), and the same edit made differently on both sides."""
    for (their_name, theirs), (my_name, mine) in itertools.product(EDITS.items(), repeat=2):
        yield pytest.param(theirs(), mine(), id=f"theirs {their_name}, mine {my_name}")
    for at in (0, 5, 11):
        yield pytest.param(
            replace(BASE, at, "theirs\n"), replace(BASE, at, "mine\n"), id=f"both change {at + 1}"
        )
    yield pytest.param(
        replace(replace(BASE, 1, "2 theirs\n"), 8, "9 theirs\n"),
        replace(replace(BASE, 4, "5 mine\n"), 11, "12 mine\n"),
        id="two edits each, apart",
    )


CASES = list(cases())


def test_the_corpus_holds_at_least_thirty_cases():
    assert len(CASES) >= 30


@pytest.mark.parametrize(("theirs", "mine"), CASES)
def test_the_merge_agrees_with_git_merge_file(theirs, mine, tmp_path):
    base, theirs, mine = "".join(BASE), "".join(theirs), "".join(mine)
    git_clean, git_text = git_merge_file(base, theirs, mine, tmp_path)
    merged = merge_text(base, theirs, mine)
    assert merged.clean is git_clean
    if git_clean:
        assert merged.text() == git_text


def test_changes_far_apart_keep_both_with_no_question():
    base = "# Guide\n\nInstall it.\n\nRun it.\n\nStop it.\n"
    theirs = base.replace("Install it.", "Install it with pip.")
    mine = base.replace("Stop it.", "Stop it with Ctrl-C.")
    merged = merge_text(base, theirs, mine)
    assert merged.clean
    assert merged.text() == "# Guide\n\nInstall it with pip.\n\nRun it.\n\nStop it with Ctrl-C.\n"


@pytest.mark.parametrize(
    ("choice", "text", "expected"),
    [
        ("theirs", "", "a\nTHEIRS\nc\n"),
        ("mine", "", "a\nMINE\nc\n"),
        ("both", "", "a\nTHEIRS\nMINE\nc\n"),
        ("edit", "Both, in my words\n", "a\nBoth, in my words\nc\n"),
    ],
)
def test_a_hunk_is_resolved_by_the_persons_choice(choice, text, expected):
    merged = merge_text("a\nb\nc\n", "a\nTHEIRS\nc\n", "a\nMINE\nc\n")
    assert merged.hunks == [Hunk("b\n", "THEIRS\n", "MINE\n")]
    assert merged.text([(choice, text)]) == expected
    with pytest.raises(ValueError):
        merged.text([])


def page(path, title="T", body=""):
    return {"path": path, "title": title, "body": body}


def test_pages_merge_one_by_one_and_keep_what_each_side_added_and_deleted():
    base = [page("a", body="1\n2\n3\n"), page("b"), page("c")]
    theirs = [page("a", body="1 theirs\n2\n3\n"), page("b"), page("c"), page("t")]
    mine = [page("a", body="1\n2\n3 mine\n"), page("new"), page("c")]  # b deleted, new added
    merged, clashes = merge_pages(base, theirs, mine)
    assert clashes == []
    assert [p["path"] for p in merged] == ["a", "new", "c", "t"]
    assert merged[0]["body"] == "1 theirs\n2\n3 mine\n"


def test_titles_changed_on_one_side_merge_and_on_both_clash():
    base, theirs, mine = [page("a", "Old")], [page("a", "Theirs")], [page("a", "Old", "x\n")]
    merged, clashes = merge_pages(base, theirs, mine)
    assert merged == [page("a", "Theirs", "x\n")] and clashes == []
    merged, clashes = merge_pages(base, theirs, [page("a", "Mine")])
    assert [clash.as_json() for clash in clashes] == [
        {
            "page": "a",
            "hunks": [{"field": "title", "base": "Old", "theirs": "Theirs", "mine": "Mine"}],
        }
    ]


def test_a_page_deleted_on_one_side_and_changed_on_the_other_clashes():
    base = [page("a", body="x\n"), page("b")]
    merged, clashes = merge_pages(base, [page("b")], [page("a", body="y\n"), page("b")])
    assert [clash.as_json() for clash in clashes] == [
        {
            "page": "a",
            "hunks": [{"field": "body", "base": "x\n", "theirs": "", "mine": "y\n"}],
            "deletedBy": "theirs",
        }
    ]
    merged, clashes = merge_pages(base, [page("b")], base)  # mine left it: the deletion holds
    assert merged == [page("b")] and clashes == []

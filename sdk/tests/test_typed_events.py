"""Typed events: handlers receive their event's class from ``docplatform_sdk.events``
(attribute access as ever), and a type checker (mypy) flags a misspelled field of it."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import docplatform_sdk
import pytest
from docplatform_sdk import create_integration
from docplatform_sdk.authoring.scaffold import scaffold_create
from docplatform_sdk.dispatch import Dispatcher
from docplatform_sdk.events import (
    EXAMPLES,
    Feedback,
    PageFeedbackEvent,
    SpaceContentUpdatedEvent,
    Visitor,
)
from docplatform_sdk.jsonobject import JSONObject

SAMPLE = """
from docplatform_sdk import Context, create_integration
from docplatform_sdk.events import PageFeedbackEvent, SpaceContentUpdatedEvent


def on_content_updated(event: SpaceContentUpdatedEvent, context: Context) -> None:
    print(event.spaceId, event.revisionId.upper())
    FIELD_READ


def on_feedback(event: PageFeedbackEvent, context: Context) -> None:
    rating: str = event.feedback.rating
    print(rating, event.visitor.anonymousId, event.test)


integration = create_integration(
    events={"space_content_updated": on_content_updated, "page_feedback": on_feedback}
)
"""


def received(event_type: str, body: dict):
    """What a handler of ``event_type`` receives for ``body``, through the runtime's dispatch."""
    seen = []
    integration = create_integration(events={event_type: lambda event, context: seen.append(event)})
    answer = Dispatcher(integration).dispatch(body, {"apiEndpoint": ""}, None)
    assert answer.status == 200
    return seen[0]


def test_a_handler_receives_its_events_class_with_attribute_access_kept():
    event = received("space_content_updated", EXAMPLES["space_content_updated"])
    assert type(event) is SpaceContentUpdatedEvent
    assert isinstance(event, JSONObject) and isinstance(event, dict)
    assert event.spaceId == event["spaceId"] == "sPaCe0000sample00001"
    assert event.test is None  # optional and absent: None
    with pytest.raises(AttributeError, match="space_id"):
        event.space_id  # noqa: B018 - a misspelling still raises

    feedback = received("page_feedback", {**EXAMPLES["page_feedback"], "test": True})
    assert type(feedback) is PageFeedbackEvent
    assert type(feedback.visitor) is Visitor and type(feedback.feedback) is Feedback
    assert feedback.visitor.userId is None and feedback.visitor.cookies == {}
    assert feedback.feedback.rating == "good" and feedback.test is True


def test_an_event_type_the_sdk_does_not_know_still_reads_as_attributes():
    event = received("ping", {"type": "ping", "eventId": "e", "installationId": "i"})
    assert type(event) is JSONObject and event.eventId == "e"


def mypy(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess:
    """mypy on one file, the SDK on its path (this checkout's when it is one)."""
    (tmp_path / "sample.py").write_text(source)
    sdk_root = Path(docplatform_sdk.__file__).resolve().parents[1]
    env = {"PATH": "/usr/bin:/bin"}
    if (sdk_root / "pyproject.toml").exists():  # a checkout, not site-packages
        env["MYPYPATH"] = str(sdk_root)
    command = [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary"]
    command += ["--cache-dir", str(tmp_path / ".mypy_cache"), *args, "sample.py"]
    return subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )


needs_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (pip install './sdk[test]')",
)


@needs_mypy
def test_mypy_flags_a_misspelled_field_and_accepts_the_real_one(tmp_path):
    wrong = mypy(tmp_path, SAMPLE.replace("FIELD_READ", "print(event.space_id)"), "--strict")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert (
        'sample.py:8: error: "SpaceContentUpdatedEvent" has no attribute "space_id"; '
        'maybe "spaceId"?'
    ) in wrong.stdout
    assert wrong.stdout.count("error:") == 1, wrong.stdout

    right = mypy(tmp_path, SAMPLE.replace("FIELD_READ", "print(event.spaceId)"), "--strict")
    assert (right.returncode, right.stdout) == (0, ""), right.stderr


@needs_mypy
def test_mypy_knows_a_fields_values(tmp_path):
    source = SAMPLE.replace("FIELD_READ", 'assert event.type == "space_view"')
    refused = mypy(tmp_path, source, "--strict", "--strict-equality")
    assert "Non-overlapping equality check" in refused.stdout, refused.stdout


@needs_mypy
def test_the_scaffolds_code_type_checks(tmp_path):
    scaffold_create(folder=tmp_path / "hello", organization="acme")
    source = (tmp_path / "hello" / "main.py").read_text()
    assert "def on_content_updated(event: SpaceContentUpdatedEvent, context: Context)" in source
    checked = mypy(tmp_path, source)
    assert (checked.returncode, checked.stdout) == (0, ""), checked.stderr

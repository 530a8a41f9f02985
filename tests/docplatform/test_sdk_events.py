"""The SDK's typed events (``sdk/docplatform_sdk/events.py``) agree with the event catalogue:
the generated module is the one ``tools/generate_sdk_events.py`` writes now (CI fails
otherwise), each class has the fields of its type's body schema, and each example body is
valid against it."""

import subprocess
import sys
import typing
from pathlib import Path

from docplatform_sdk import events as sdk_events
from docplatform_sdk.manifest import EVENT_SCOPES
from jsonschema import Draft202012Validator

from docplatform.events.catalogue import CATALOGUE
from docplatform.events.schemas import body_schema, example_body

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "tools" / "generate_sdk_events.py"


def generator(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(GENERATOR), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{REPO}:{REPO / 'sdk'}"},
        timeout=120,
    )


def test_the_committed_module_is_what_the_catalogue_generates():
    done = generator("--check")
    assert done.returncode == 0, done.stderr
    assert "agrees with the event catalogue" in done.stdout


def test_a_module_that_drifted_from_the_catalogue_fails_the_check(tmp_path):
    drifted = tmp_path / "events.py"
    text = Path(sdk_events.__file__).read_text()
    drifted.write_text(text.replace("    revisionId: str\n", "    revision_id: str\n", 1))
    done = generator("--check", "--target", str(drifted))
    assert done.returncode == 1
    assert "differs from the event catalogue: run python tools/generate_sdk_events.py" in (
        done.stderr
    )
    assert generator("--target", str(drifted)).returncode == 0  # written again: it agrees
    assert drifted.read_text() == text


def test_each_platform_event_has_a_class_with_its_schemas_fields_and_a_valid_example():
    assert set(sdk_events.EVENT_CLASSES) == set(EVENT_SCOPES)
    assert "ping" in CATALOGUE and "ping" not in sdk_events.EVENT_CLASSES  # an app's own
    for event_type, kind in sdk_events.EVENT_CLASSES.items():
        schema = body_schema(CATALOGUE[event_type])
        assert list(kind.__annotations__) == list(schema["properties"]), event_type
        optional = set(schema["properties"]) - set(schema["required"])
        assert set(kind.OPTIONAL) == optional, event_type
        assert typing.get_args(kind.__annotations__["type"]) == (event_type,)
        assert sdk_events.EXAMPLES[event_type] == example_body(CATALOGUE[event_type])
        validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        assert not list(validator.iter_errors(sdk_events.EXAMPLES[event_type])), event_type

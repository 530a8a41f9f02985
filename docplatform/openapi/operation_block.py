"""The built-in OpenAPI operation block (``docplatform.reading.blocks`` renders it, no
integration is called): one operation of one of the organization's OpenAPI documents,
following its latest version, in the reader, previews and on sites.

Its fence is a ``block`` fence whose integration is the host's own (``@docplatform``) and
whose ``props`` name the document and the operation: ``{"document": "pets", "operation":
"GET /pets/{petId}"}`` or ``{"document": "pets", "operationId": "getPet"}``. A document or an
operation that is not there (any more) is an inline notice (``Unavailable``), not an error.
Every text of the document is escaped by the template; descriptions are Markdown rendered by
the product's one renderer (sanitized).
"""

from django.template.loader import render_to_string

from ..markdown import render_markdown
from ..reading.blocks import BuiltinBlock
from . import selectors
from .operations import operation_of

BLOCK_ID = "openapi-operation"
TITLE = "OpenAPI operation"
#: Operations offered in the quick insert menu at most (the newest documents' first).
MAX_CHOICES = 300


class Unavailable(Exception):
    """The block cannot show its operation; the message says why, for the page's reader."""


def _target(props: dict) -> tuple[str, str, str]:
    document = props.get("document")
    operation = props.get("operation")
    operation_id = props.get("operationId")
    if not isinstance(document, str) or not document:
        raise Unavailable('Name an OpenAPI document in the block\'s props: "document".')
    if isinstance(operation, str) and operation.strip():
        return document, operation.strip(), ""
    if isinstance(operation_id, str) and operation_id:
        return document, "", operation_id
    raise Unavailable(
        'Name an operation in the block\'s props: "operation" ("GET /pets") or "operationId".'
    )


def operation_html(props: dict, organization_id: str, specs: dict | None = None) -> str:
    """The operation's HTML; Unavailable when the document or the operation is missing.
    ``specs`` keeps the documents read for the other blocks of the same page."""
    name, operation, operation_id = _target(props)
    specs = {} if specs is None else specs
    if name not in specs:
        specs[name] = selectors.latest_spec(organization_id, name)
    spec = specs[name]
    if spec is None:
        raise Unavailable(f"The organization has no OpenAPI document named {name!r}.")
    found = operation_of(spec, operation=operation, operation_id=operation_id)
    if found is None:
        wanted = operation or f"operationId {operation_id}"
        raise Unavailable(f"The OpenAPI document {name!r} has no operation {wanted}.")
    return render_to_string(
        "docs/_openapi_operation.html",
        {
            "op": found,
            "document": name,
            "description": render_markdown(found.description) if found.description else "",
        },
    )


def operation_choices(organization_id: str) -> list[dict]:
    """The quick insert menu's entries: one per operation of the organization's documents,
    each with the props its block is inserted with."""
    choices = []
    for name, operations in selectors.latest_operations(organization_id):
        for method, path, operation_id, summary in operations:
            if len(choices) >= MAX_CHOICES:
                return choices
            choices.append(
                {
                    "title": f"{method} {path}",
                    "description": " · ".join(filter(None, [summary, operation_id, name])),
                    "props": {"document": name, "operation": f"{method} {path}"},
                }
            )
    return choices


#: The block as the host's own (``reading.blocks.register_builtin``, at start).
BUILTIN_BLOCK = BuiltinBlock(
    block_id=BLOCK_ID,
    title=TITLE,
    choices=operation_choices,
    html=operation_html,
    unavailable=Unavailable,
)

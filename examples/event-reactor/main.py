"""Event Reactor: a digest of a space's content, kept up to date by the platform's events.

On ``space_content_updated`` it reads the new revision's pages back through the platform API
(granted by the ``space:content:read`` scope) and writes into its space installation the
``digest`` setting (pages, words, the pages under ``min_words``) and, as external id, the
revision the digest describes, so a redelivered event is recognized and skipped.
``GET {publicEndpoint}/`` answers the current digest.
"""

from docplatform_sdk import Response, create_integration

DEFAULT_MIN_WORDS = 50
PAGE_LIMIT = 500  # the API's largest page
MAX_DIGEST_LENGTH = 1000


def revision_pages(context, revision_id: str) -> list[dict]:
    """Every page of the revision, following the API's pagination."""
    pages = []
    while True:
        answer = context.api.get(
            f"revisions/{revision_id}/pages/?limit={PAGE_LIMIT}&offset={len(pages)}"
        )
        pages += answer["results"]
        if not answer["next"]:
            return pages


def digest(pages: list[dict], min_words: int) -> str:
    """``3 page(s), 412 word(s); under 50 words: /faq, /intro``."""
    words = {page["path"]: len(page["body"].split()) for page in pages}
    text = f"{len(pages)} page(s), {sum(words.values())} word(s)"
    short = sorted(path for path, count in words.items() if count < min_words)
    if short:
        text += f"; under {min_words} words: " + ", ".join(short)
    return text[:MAX_DIGEST_LENGTH]


def on_content_updated(event, context):
    installation = context.environment.spaceInstallation
    if installation is None:
        print("event-reactor: installed in the organization only; install it into a space")
        return
    marker = f"revision:{event.revisionId}"
    if marker in installation.externalIds:
        return  # a redelivery of an event already digested
    min_words = int(installation.configuration.get("min_words", DEFAULT_MIN_WORDS))
    pages = revision_pages(context, event.revisionId)
    context.api.update_installation(
        configuration={"digest": digest(pages, min_words)}, external_ids=[marker]
    )


def fetch(request, context):
    installation = context.environment.spaceInstallation
    if installation is None:
        return Response.json({"error": "call a space installation's endpoint"}, status=404)
    return Response.json(
        {
            "space": installation.space,
            "digest": installation.configuration.get("digest", ""),
            "revision": next(iter(installation.externalIds), "").removeprefix("revision:"),
        }
    )


integration = create_integration(fetch=fetch, events={"space_content_updated": on_content_updated})

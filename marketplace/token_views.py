"""Developer settings: the signed-in person's personal API tokens.

A new token is shown in the answer to the form that made it, and nowhere else: it is not kept
(only its hash is stored), not put in the session or a message, and the answer is not cached.
Each rendering of the form carries a one-time id, so sending the same form again (a reload)
makes no second token and shows nothing.
"""

import secrets

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect
from django.utils import timezone

from docplatform.selectors import api_token_of, api_token_status, api_tokens_of
from docplatform.services import api_token_create, api_token_revoke

from .forms import ApiTokenForm
from .views import MemberView

FORM_IDS = "developer_settings_form_ids"
FORM_IDS_KEPT = 20  # forms open at once in one session (tabs)
SERVICE_FIELDS = {"name": "name", "expires_at": "expiration"}


class DeveloperSettingsView(MemberView):
    """GET: the person's tokens and a form to make one; POST: make it and show it, once."""

    def get(self, request):
        return self.settings_page(self.new_form())

    def post(self, request):
        form = ApiTokenForm(request.POST)
        if request.POST.get("form_id") not in request.session.get(FORM_IDS, []):
            return self.already_sent()
        if not form.is_valid():  # shown again with the same form id, still unused
            return self.settings_page(form, status=400)
        try:
            token, raw = api_token_create(
                user=request.user,
                name=form.cleaned_data["name"],
                expires_at=form.expires_at(timezone.now()),
            )
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                form.add_error(SERVICE_FIELDS.get(field), problems)
            return self.settings_page(form, status=400)
        self.forget_form_id(form.cleaned_data["form_id"])
        return self.settings_page(self.new_form(), new_token={"token": token, "raw": raw})

    def settings_page(self, form, *, new_token=None, status=200):
        now = timezone.now()
        tokens = [
            {"token": token, "status": api_token_status(token, now)}
            for token in api_tokens_of(self.request.user)
        ]
        response = self.page(
            "marketplace/developer_settings.html",
            {"form": form, "tokens": tokens, "new_token": new_token},
            status=status,
        )
        response["Cache-Control"] = "no-store"
        return response

    def already_sent(self):
        messages.info(
            self.request,
            "That form was sent already: the token it made was shown once and is not shown "
            "again. Make a new one if you did not copy it.",
        )
        return redirect("marketplace:developer-settings")

    # --- one-time form ids ----------------------------------------------------------------

    def new_form_id(self) -> str:
        form_id = secrets.token_urlsafe(16)
        kept = self.request.session.get(FORM_IDS, [])
        self.request.session[FORM_IDS] = [*kept, form_id][-FORM_IDS_KEPT:]
        return form_id

    def forget_form_id(self, form_id: str) -> None:
        kept = self.request.session.get(FORM_IDS, [])
        self.request.session[FORM_IDS] = [kept_id for kept_id in kept if kept_id != form_id]

    def new_form(self) -> ApiTokenForm:
        return ApiTokenForm(initial={"form_id": self.new_form_id()})


class TokenRevokeView(MemberView):
    """POST: revoke one of the person's tokens; it stops working at once."""

    def post(self, request, token_id):
        token = api_token_of(request.user, token_id)
        if token is None:
            raise Http404("No such token.")
        api_token_revoke(token=token)
        messages.success(request, f"The token “{token.name}” (…{token.hint}) is revoked.")
        return redirect("marketplace:developer-settings")

"""The Audit log page's filters, from its query string: they parse input into the selector's
keywords (``selectors.audit_entries``)."""

from datetime import UTC, date, datetime, time, timedelta
from itertools import groupby

from django import forms


def _day_field(label: str) -> forms.DateField:
    return forms.DateField(
        required=False,
        label=label,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        error_messages={"invalid": "Enter a date as YYYY-MM-DD."},
    )


def _start_of(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def action_choices(actions: list[str]) -> list:
    """The actions seen, grouped by their first word; each group starts with the choice of
    all its actions (``invitation``: created, accepted, revoked), as the API's filter."""
    return [("", "Any action")] + [
        (subject, [(subject, f"Any {subject} action"), *((action, action) for action in group)])
        for subject, group in groupby(actions, key=lambda action: action.partition(".")[0])
    ]


class AuditLogFilterForm(forms.Form):
    """Every filter optional; days are whole UTC days, both ends included."""

    actor = forms.CharField(
        required=False,
        max_length=200,
        label="Who",
        widget=forms.TextInput(attrs={"placeholder": "username or installation id"}),
    )
    action = forms.ChoiceField(required=False, label="What")
    since = _day_field("From (UTC)")
    until = _day_field("To (UTC)")

    def __init__(self, data=None, *, actions: list[str]):
        super().__init__(data)
        self.fields["action"].choices = action_choices(actions)
        self.fields["action"].error_messages["invalid_choice"] = (
            "%(value)s is not an action of this log"
        )

    def clean(self):
        cleaned = super().clean()
        since, until = cleaned.get("since"), cleaned.get("until")
        if since and until and since > until:
            self.add_error("until", "The last day cannot come before the first.")
        return cleaned

    def filters(self) -> dict:
        """The selector's keywords (call after is_valid())."""
        data = self.cleaned_data
        since, until = data.get("since"), data.get("until")
        return {
            "actor": data.get("actor", ""),
            "action": data.get("action", ""),
            "since": _start_of(since) if since else None,
            # The day after the last one, where there is one.
            "until": _start_of(until + timedelta(days=1)) if until and until < date.max else None,
        }

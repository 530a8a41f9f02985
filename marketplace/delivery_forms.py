"""Forms of the delivery log pages: the list's filters, a test event, "Resend all failed
since ..."; they parse input, the webhook services decide."""

from django import forms

from docplatform.events.models import Delivery

#: How the time fields are typed: an <input type="datetime-local"> sends the first form.
TIME_FORMATS = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"]


def _time_field(label: str, *, required: str = "") -> forms.DateTimeField:
    """A UTC time typed in a datetime-local input; ``required``: the message when it is
    missing (optional without one)."""
    messages = {"invalid": "Enter a date and time as YYYY-MM-DDTHH:MM (UTC)."}
    return forms.DateTimeField(
        required=bool(required),
        label=label,
        input_formats=TIME_FORMATS,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=TIME_FORMATS[0]),
        error_messages=messages | ({"required": required} if required else {}),
    )


class DeliveryFilterForm(forms.Form):
    """The list's filters, from the query string; every one optional."""

    status = forms.ChoiceField(
        required=False, choices=[("", "Any status"), *Delivery.Status.choices]
    )
    event = forms.ChoiceField(required=False, label="Event type")
    since = _time_field("From (UTC)")
    until = _time_field("To (UTC)")

    def __init__(self, data=None, *, event_types):
        super().__init__(data)
        self.fields["event"].choices = [("", "Any event")] + [(t, t) for t in event_types]
        self.fields["event"].error_messages["invalid_choice"] = (
            "%(value)s is not an event type of this log; one of " + ", ".join(event_types)
        )
        self.fields["status"].error_messages["invalid_choice"] = (
            "%(value)s is not a status; one of " + ", ".join(Delivery.Status.values)
        )

    def clean(self):
        cleaned = super().clean()
        since, until = cleaned.get("since"), cleaned.get("until")
        if since and until and since >= until:
            self.add_error("until", "The end must be after the start.")
        return cleaned

    def filters(self) -> dict:
        """The selector's keywords (call after is_valid())."""
        data = self.cleaned_data
        return {
            "status": data.get("status", ""),
            "event_type": data.get("event", ""),
            "since": data.get("since"),
            "until": data.get("until"),
        }


class TestEventForm(forms.Form):
    event_type = forms.ChoiceField(label="Event type")

    def __init__(self, data=None, *, event_types):
        super().__init__(data)
        self.fields["event_type"].choices = [(t, t) for t in event_types]


class ResendFailedForm(forms.Form):
    prefix = "resend"  # its ``since`` is not the list filter's

    since = _time_field(
        "Failed since (UTC)", required="Give the time since when failed deliveries are sent again."
    )


class ReplayForm(forms.Form):
    """ "Replay a time range": the events of [since, until) the endpoint did not get (or all)."""

    prefix = "replay"  # its ``since`` and ``until`` are not the list filter's

    since = _time_field("From (UTC)", required="Give the start of the time range.")
    until = _time_field("To (UTC)", required="Give the end of the time range.")
    include_delivered = forms.BooleanField(
        required=False, label="Also the events it got (same eventIds)"
    )

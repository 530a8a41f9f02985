"""Forms of the marketplace pages: they parse input; the installation services decide."""

from datetime import timedelta

from django import forms
from django.core.exceptions import ValidationError
from docplatform_sdk.manifest import CATEGORIES

from integrations.configuration import properties_of
from integrations.models import Installation
from integrations.services.completion import Completion


class CatalogueFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=100, label="Search")
    category = forms.ChoiceField(
        required=False,
        choices=[("", "All categories")]
        + [(category, category.replace("-", " ").capitalize()) for category in CATEGORIES],
    )
    blocks = forms.BooleanField(required=False, label="With blocks")

    def filters(self) -> dict:
        """The valid filters; an invalid one (a tampered category) is left out. ``blocks``:
        only integrations that offer blocks for the editor's quick insert menu."""
        self.is_valid()
        return {
            "search": self.cleaned_data.get("q", ""),
            "category": self.cleaned_data.get("category", ""),
            "with_blocks": bool(self.cleaned_data.get("blocks")),
        }


class InstallLinkForm(forms.Form):
    """The query of an install link: its secret token, and the organization to act for."""

    token = forms.CharField(max_length=64)
    org = forms.SlugField(max_length=63, required=False)

    def parsed(self) -> dict:
        """The token and the organization's subdomain; empty strings when invalid or absent."""
        self.is_valid()
        return {
            "token": self.cleaned_data.get("token", ""),
            "org": self.cleaned_data.get("org", ""),
        }


class InstallForm(forms.Form):
    """Where to install: the organization itself, one of its spaces or one of its sites; and
    ``confirm``, the member's consent to what the integration may do (the consent page's
    button)."""

    level = forms.ChoiceField(choices=Installation.Level.choices)
    space = forms.ModelChoiceField(queryset=None, required=False)
    site = forms.ModelChoiceField(queryset=None, required=False)
    confirm = forms.CharField(required=False, max_length=8)

    def __init__(self, *args, spaces, sites, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["space"].queryset = spaces
        self.fields["site"].queryset = sites

    def clean_confirm(self) -> bool:
        """Only the button's own value consents (a bare ``confirm=no`` does not)."""
        return self.cleaned_data["confirm"] == "yes"

    def clean(self):
        cleaned = super().clean()
        level = cleaned.get("level")
        for place in ("space", "site"):
            if level == place and not cleaned.get(place):
                self.add_error(place, f"Choose a {place}.")
            elif level != place:
                cleaned[place] = None
        return cleaned


class ConfigurationForm(forms.Form):
    """An installation's configuration properties, one field per property of the manifest.

    ``button`` properties (OAuth connections) have no field: their values are credentials
    that the OAuth flow writes and nobody types in. A property with a ``completion_url`` is a
    dropdown of the options in ``completions`` (a text input when they could not be had).
    """

    prefix = "configuration"

    def __init__(
        self,
        *args,
        definition: dict,
        configuration: dict,
        completions: dict[str, Completion] | None = None,
        **kwargs,
    ):
        super().__init__(*args, initial=dict(configuration), **kwargs)
        required = list(definition.get("required") or [])
        self.required_names = set(required)
        properties = properties_of(definition)
        completions = completions or {}
        for name in sorted(properties, key=lambda name: _position(name, properties, required)):
            if name in completions:
                field = _completed_field(
                    properties[name], completions[name], configuration.get(name)
                )
            else:
                field = _field_for(properties[name])
            if field is not None:
                self.fields[name] = field

    def changes(self) -> dict:
        """The changed properties, as ``installation_configure`` takes them (None unsets)."""
        return {name: _stored_value(self.cleaned_data[name]) for name in self.changed_data}

    def status_lines(self, reasons: list[dict]) -> list[dict]:
        """The status's reasons (``{"path", "message"}``) as people read them: one about a
        field of this form (``configuration.<property>...``) in the form's own words ("Webhook
        URL is required") with the field's name, any other as its path and message."""
        lines = []
        for reason in reasons:
            path, message = str(reason.get("path", "")), str(reason.get("message", ""))
            name = path.removeprefix("configuration.").split(".")[0]
            if path.startswith("configuration.") and name in self.fields:
                label = self.fields[name].label or name
                joiner = " " if message.startswith(("is ", "must ", "has ")) else ": "
                lines.append({"field": name, "text": f"{label}{joiner}{message}"})
            else:
                lines.append({"field": None, "text": f"{path} {message}".strip()})
        return lines

    def add_service_error(self, error: ValidationError) -> None:
        """Put the service's ``configuration.<property>`` errors next to their fields."""
        for path, messages in getattr(error, "message_dict", {"": error.messages}).items():
            name = path.removeprefix("configuration.").split(".")[0]
            for message in messages:
                self.add_error(name if name in self.fields else None, message)


def _position(name: str, properties: dict, required: list) -> tuple:
    """Required properties first, as listed, then the others by title. The manifest's own
    order does not survive PostgreSQL's jsonb, so it cannot be the order."""
    if name in required:
        return (0, required.index(name), "")
    return (1, 0, str(properties[name].get("title") or name).lower())


def _common(prop: dict) -> dict:
    return {"required": False, "label": prop.get("title"), "help_text": prop.get("description")}


def _completed_field(prop: dict, completion: Completion, current) -> forms.Field:
    """A dropdown of the integration's options (the current value kept even when no longer
    offered); a text input with the reason when there are no options to show."""
    common = _common(prop)
    if completion.problem:
        note = f"The options could not be loaded from the integration ({completion.problem}); "
        note += "type the value instead."
        common["help_text"] = " ".join(filter(None, [common["help_text"], note]))
        return forms.CharField(**common)
    options = [(option["value"], option["label"]) for option in completion.options]
    if current and current not in {value for value, _ in options}:
        options.append((current, f"{current} (no longer offered)"))
    # A plain CharField, like an enum's: the integration decides which values it accepts.
    return forms.CharField(widget=forms.Select(choices=[("", "—"), *options]), **common)


def _field_for(prop: dict) -> forms.Field | None:
    common = _common(prop)
    kind = prop.get("type")
    if kind == "string" and "enum" in prop:
        # A plain CharField: whether the value is one of the options is the service's rule.
        options = [(str(option), str(option)) for option in prop["enum"]]
        return forms.CharField(widget=forms.Select(choices=[("", "—"), *options]), **common)
    if kind == "string":
        return forms.CharField(**common)
    if kind == "number":
        return forms.FloatField(widget=forms.NumberInput(attrs={"step": "any"}), **common)
    if kind == "boolean":
        return forms.BooleanField(**common)
    return None


def _stored_value(value):
    if value == "" or value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class SpaceSelectionForm(forms.Form):
    space_selection = forms.ChoiceField(
        choices=Installation.SpaceSelection.choices, widget=forms.RadioSelect, label="Spaces"
    )
    spaces = forms.ModelMultipleChoiceField(
        queryset=None, required=False, widget=forms.CheckboxSelectMultiple, label="Selected"
    )

    def __init__(self, *args, spaces, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["spaces"].queryset = spaces


class ApiTokenForm(forms.Form):
    """A new personal token: its name and how long it works. ``form_id`` is the page's one-time
    form id, so sending the form again (a reload) makes no second token."""

    EXPIRATIONS = [
        ("7", "7 days"),
        ("30", "30 days"),
        ("90", "90 days"),
        ("365", "1 year"),
        ("never", "No expiration"),
    ]

    name = forms.CharField(
        max_length=100, help_text="What the token is for, e.g. “CI” or “my laptop”."
    )
    expiration = forms.ChoiceField(choices=EXPIRATIONS, initial="30")
    form_id = forms.CharField(max_length=64, widget=forms.HiddenInput)

    def expires_at(self, now):
        """When the token stops working: None for never."""
        expiration = self.cleaned_data["expiration"]
        return None if expiration == "never" else now + timedelta(days=int(expiration))

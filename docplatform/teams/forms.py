"""Forms of the Members page and of an invitation's page: they parse input; the teams'
services decide (and name the field of what they refuse)."""

from django import forms

from ..models import Membership

ROLE_CHOICES = Membership.Role.choices


class InvitationForm(forms.Form):
    email = forms.EmailField(
        max_length=254,
        label="E-mail address",
        # a text input, as the marketplace's styles know it; the phone's keyboard for addresses
        widget=forms.TextInput(attrs={"inputmode": "email", "autocomplete": "off"}),
    )
    role = forms.ChoiceField(choices=ROLE_CHOICES, initial=Membership.Role.MEMBER)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=ROLE_CHOICES)


class AccountForm(forms.Form):
    """A new account for someone who opened an invitation without one."""

    username = forms.CharField(
        max_length=150,
        help_text="Letters, digits and @ . + - _ only.",
        widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True}),
    )
    password = forms.CharField(
        strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    password2 = forms.CharField(
        label="Password again",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

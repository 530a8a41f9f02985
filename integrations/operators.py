"""Who acts at the operators' doors: the Django admin (Django's staff permissions guard it)
and the commands that name no person (whoever holds the shell). The organizations' roles do
not apply there (``policies.may_act`` lets an ``Operator`` through); the audit log records
the operator: the staff user acting in the admin, or "operator" for a command."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Operator:
    """An operator at their door; ``user``: the staff user acting (None: a command)."""

    user: object = None


#: A command's operator, who has no user.
OPERATOR = Operator()


def is_operator(user) -> bool:
    return isinstance(user, Operator)


def acting(user):
    """Who the audit log records for ``user``: an operator's staff user (or None), else the
    person or the installation token itself."""
    return user.user if is_operator(user) else user

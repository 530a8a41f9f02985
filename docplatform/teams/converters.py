"""The path converter of a member's username (``<username:username>``), registered in
``DocplatformConfig.ready`` for the API's routes and the Members page's."""


class UsernameConverter:
    """A username as Django's user model takes it: letters, digits and ``@.+-_``, at most 150
    characters (nothing a database cannot store reaches a query)."""

    regex = r"[\w.@+-]{1,150}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value

"""JSON objects whose keys also read as attributes, as integration code expects them."""


class JSONObject(dict):
    """A dict read as ``environment.integration.urls.publicEndpoint`` or by key.

    Nested objects (also inside lists) are JSONObjects too. A missing key raises
    AttributeError, so a typo is never silently None.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, value in self.items():
            super().__setitem__(key, wrap(value))

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setitem__(self, key, value):
        super().__setitem__(key, wrap(value))


def wrap(value):
    """``value`` with every dict in it turned into a JSONObject."""
    if isinstance(value, JSONObject):
        return value
    if isinstance(value, dict):
        return JSONObject(value)
    if isinstance(value, list):
        return [wrap(item) for item in value]
    return value


class TypedObject(JSONObject):
    """A JSONObject of a known shape (``docplatform_sdk.events``' classes): a field listed in
    ``OPTIONAL`` reads None while absent, and a field named in ``NESTED`` holds its own class
    (``event.visitor`` is a ``Visitor``). Every other key reads as on any JSONObject."""

    OPTIONAL: tuple[str, ...] = ()
    NESTED: dict[str, type["TypedObject"]] = {}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, kind in self.NESTED.items():
            value = self.get(key)
            if isinstance(value, dict) and not isinstance(value, kind):
                dict.__setitem__(self, key, kind(value))

    def __getattr__(self, key):
        if key in self.OPTIONAL and key not in self:
            return None
        return super().__getattr__(key)

"""The one error type for anything a user gave us that we cannot use."""


class InputError(ValueError):
    """Bad parameter, file or option. ``field`` names what was wrong (may be empty)."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)

    def __reduce__(self):  # pickled both ways: a cluster's worker raises it in the caller
        return (type(self), (self.field, self.message))

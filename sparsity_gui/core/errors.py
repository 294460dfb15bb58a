"""The error types the models share: bad input (InputError), a grid of runs stopped
before its end (RunsCancelled) and one whose cluster failed it (RunsFailed)."""


class InputError(ValueError):
    """Bad parameter, file or option. ``field`` names what was wrong (may be empty)."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)

    def __reduce__(self):  # pickled both ways: a cluster's worker raises it in the caller
        return (type(self), (self.field, self.message))


class RunsCancelled(Exception):
    """Raised by a grid of runs (the note's scaling grid, the interference sweep) when asked
    to stop; ``rows`` holds the runs that finished."""

    def __init__(self, rows: list):
        super().__init__(rows)
        self.rows = rows


class RunsFailed(InputError):
    """Raised by a grid of runs on a cluster when the cluster fails it (its scheduler went
    away): the reason, as an InputError, and in ``rows`` the runs that finished, which a
    caller can keep so that a resumed grid does only the rest."""

    def __init__(self, field: str, message: str, rows: list):
        super().__init__(field, message)
        self.rows = rows

    def __reduce__(self):
        return (type(self), (self.field, self.message, self.rows))

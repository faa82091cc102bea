"""DistTrainError: a failure of the library (or of this package's own checks
of the environment), with the C API's code (dt_code)."""

OK = 0
INVALID_ARGUMENT = 1
NOT_FOUND = 2
IO_ERROR = 3
UNAVAILABLE = 4
TIMEOUT = 5
PERMISSION_DENIED = 6
INTERNAL = 7

_NAMES = ("OK", "Invalid argument", "Not found", "IO error", "Unavailable", "Timeout",
          "Permission denied", "Internal error")  # as dt_code_name()


class DistTrainError(Exception):
    """A dist-train failure. ``code`` is the C API's dt_code (an int, e.g.
    dist_train.NOT_FOUND), ``code_name`` its name, str() the message, which
    names what was wrong and where."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = int(code)
        self.message = message

    @property
    def code_name(self):
        if 0 <= self.code < len(_NAMES):
            return _NAMES[self.code]
        return "unknown"

    def __str__(self):
        return self.message

    def __repr__(self):
        return "DistTrainError(%s, %r)" % (self.code_name, self.message)

"""Kiln's error classes: one per status code of kiln::Status (docs/ARCHITECTURE.md, Errors).

Every error Kiln raises is a KilnError; the subclass names the class of failure and the message
names the node, value or field at fault, as the C++ API and the CLI do.
"""


class KilnError(Exception):
    """Base class of every error Kiln raises. `code` is the status code's stable name."""

    code = "internal"


class InvalidModel(KilnError):
    """A malformed, truncated or inconsistent model file or graph."""

    code = "invalid_model"


class UnsupportedOperator(KilnError):
    """An op, domain or opset version no provider of the session implements."""

    code = "unsupported_operator"


class UnsupportedTarget(KilnError):
    """The requested provider or instruction set is not available on this machine."""

    code = "unsupported_target"


class InvalidArgument(KilnError, ValueError):
    """A bad input (name, dtype, shape), option or file given by the caller."""

    code = "invalid_argument"


class ShapeGuardFailure(KilnError, ValueError):
    """An input shape outside what the compiled plan or the shape profile accepts."""

    code = "shape_guard_failure"


class AllocationFailure(KilnError, MemoryError):
    """Memory could not be allocated."""

    code = "allocation_failure"


class BackendFailure(KilnError):
    """A kernel library (oneDNN) failed."""

    code = "backend_failure"


class NumericalIssue(KilnError):
    """A NaN or infinity where a check was asked for."""

    code = "numerical_issue"


class IntegrityFailure(KilnError):
    """A hash, signature or schema-version mismatch: a corrupted or wrongly signed artifact."""

    code = "integrity_failure"


class NotFound(KilnError, FileNotFoundError):
    """A missing file, asset or name."""

    code = "not_found"


class Internal(KilnError):
    """A bug in Kiln: please report it with the message."""

    code = "internal"


class Cancelled(KilnError):
    """A run ended early on request (RunOptions.terminate)."""

    code = "cancelled"


_BY_CODE = {cls.code: cls for cls in (InvalidModel, UnsupportedOperator, UnsupportedTarget, InvalidArgument,
                                       ShapeGuardFailure, AllocationFailure, BackendFailure, NumericalIssue,
                                       IntegrityFailure, NotFound, Internal, Cancelled)}


def error_class(code):
    """The class raised for the status code named `code` (the extension module calls this)."""
    return _BY_CODE.get(code, Internal)

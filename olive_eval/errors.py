"""Exception types. Each carries a one-line message a user can act on; the CLI maps them to exit codes."""

from __future__ import annotations


class OliveEvalError(Exception):
    """Base of every error olive-eval raises on purpose."""


class ConfigError(OliveEvalError):
    """The run config is wrong: bad JSON, unknown keys, bad references. The CLI exits 2.

    ``source`` names the config file (or ``<dict>``), ``path`` the JSON path inside it.
    """

    def __init__(self, message: str, *, path: str = "", source: str | None = None) -> None:
        self.message = message
        self.path = path
        self.source = source
        super().__init__(self._render())

    def _render(self) -> str:
        where = ": ".join(part for part in (self.source, self.path) if part)
        return f"{where}: {self.message}" if where else self.message

    def with_source(self, source: str) -> ConfigError:
        return ConfigError(self.message, path=self.path, source=source)


class UsageError(OliveEvalError):
    """The command cannot run as asked (an unusable or busy output directory). The CLI exits 2."""


class DataError(UsageError):
    """A data config cannot be evaluated on, whatever the model (a missing column, a malformed file, no rows):
    found when the run is planned, before any model loads. The CLI exits 2."""


class EvaluationError(OliveEvalError):
    """A model could not be evaluated (load failure, provider fallback, user function raised)."""


class MissingDependencyError(OliveEvalError):
    """An optional package a metric or runtime needs is not installed."""

    def __init__(self, package: str, needed_for: str, extra: str | None = None) -> None:
        hint = f"pip install 'olive-eval[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"{needed_for} needs the '{package}' package; install it with: {hint}")


class UserCodeError(EvaluationError):
    """A function from a user's script raised (or called ``sys.exit``): that model fails, the run goes on."""


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none), for one-line errors."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def failure_location(exc: BaseException) -> str | None:
    """``file:line`` of the innermost frame where ``exc`` (or the exception it wraps) was raised."""
    while exc.__traceback__ is None and exc.__cause__ is not None:
        exc = exc.__cause__
    if isinstance(exc, OliveEvalError) and exc.__cause__ is not None and exc.__cause__.__traceback__ is not None:
        exc = exc.__cause__  # a message of ours wrapping the real failure: point at the real one
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"

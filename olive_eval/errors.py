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


class EvaluationError(OliveEvalError):
    """A model could not be evaluated (load failure, provider fallback, user function raised)."""


class MissingDependencyError(OliveEvalError):
    """An optional package a metric or runtime needs is not installed."""

    def __init__(self, package: str, needed_for: str, extra: str | None = None) -> None:
        hint = f"pip install 'olive-eval[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"{needed_for} needs the '{package}' package; install it with: {hint}")

"""Loading functions from a user's script, with errors that say which file and which name."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from olive_eval.errors import ConfigError, UserCodeError, failure_location

_loaded: dict[Path, ModuleType] = {}


def load_user_module(user_script: Path, script_dir: Path | None = None) -> ModuleType:
    """Import ``user_script`` once per process (keyed by its resolved path).

    ``script_dir`` goes on ``sys.path`` first so the script can import its neighbours.
    """
    path = Path(user_script).resolve()
    if path in _loaded:
        return _loaded[path]
    if not path.is_file():
        raise ConfigError(f"user_script {user_script} does not exist")
    if script_dir is not None and str(Path(script_dir).resolve()) not in sys.path:
        sys.path.insert(0, str(Path(script_dir).resolve()))
    module_name = f"olive_eval_user_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"user_script {user_script} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # sys.exit() at import time must not end olive-eval
        sys.modules.pop(module_name, None)
        if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] == "olive":
            raise ConfigError(
                f'user_script {user_script} imports Olive, which is not installed: pip install "olive-eval[olive]"'
            ) from exc
        raise ConfigError(f"user_script {user_script} failed to import: it {_describe(exc, path)}") from exc
    _loaded[path] = module
    return module


def load_function(user_script: Path, name: str, script_dir: Path | None = None) -> Callable[..., Any]:
    module = load_user_module(user_script, script_dir)
    func = getattr(module, name, None)
    if func is None:
        defined = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
        raise ConfigError(
            f"user_script {user_script} has no function '{name}'; it defines: {', '.join(defined) or 'nothing callable'}"
        )
    if not callable(func):
        raise ConfigError(f"'{name}' in user_script {user_script} is not a function")
    return func


def _describe(exc: BaseException, source: Path | None = None) -> str:
    """``raised ValueError: first line`` or ``called sys.exit(3)``, plus where in the user's file.

    ``source`` is the script being imported: a SyntaxError that names no file (a null byte) is in it.
    """
    if isinstance(exc, SystemExit):
        text = f"called sys.exit({exc.code!r})"
    elif isinstance(exc, SyntaxError):
        line = (exc.text or "").strip()
        text = f"raised {type(exc).__name__}: {exc.msg}" + (f" in {_shortened(line)!r}" if line else "")
    else:
        lines = str(exc).strip().splitlines()
        text = f"raised {type(exc).__name__}" + (f": {lines[0]}" if lines else "")
    where = _syntax_error_location(exc, source) if isinstance(exc, SyntaxError) else None
    where = where or failure_location(exc)
    if source is not None and where is not None and where.startswith("<frozen"):
        where = str(source)  # the import machinery refused the file itself (a null byte, on Python < 3.11.4)
    return text + (f" (at {where})" if where else "")


def _syntax_error_location(exc: SyntaxError, source: Path | None) -> str | None:
    """``file:line`` of the bad source. The frames of a SyntaxError are the importer's, not the user's;
    code compiled from a string (``<string>``) is left to the frame that compiled it."""
    if exc.filename is None and source is not None:
        return str(source)
    if exc.filename is None or exc.filename.startswith("<"):
        return None
    return f"{exc.filename}:{exc.lineno}" if exc.lineno else exc.filename


def _shortened(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def call_user(func: Callable[..., Any], what: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``func(*args, **kwargs)`` for a function of the user's; ``what`` names it in errors.

    An exception or ``sys.exit`` becomes a :class:`UserCodeError` naming the function and where in the
    user's file it failed; Ctrl-C (KeyboardInterrupt) still stops the run. ``kwargs`` is passed as a
    dict, so a user's keyword may have any name (``model_name``, ``metric``...).
    """
    try:
        return func(*args, **kwargs)
    except (Exception, SystemExit) as exc:
        raise UserCodeError(f"{what} {_describe(exc)}") from exc

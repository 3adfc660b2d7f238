"""``olive-eval --config run.json``, ``olive-eval report OUTPUT_DIR``, ``olive-eval schema`` and
``olive-eval olive-script``.

Exit codes: 0 ok, 1 a model failed or a results file could not be written, 2 bad config or usage, 3 goals missed
(with ``--fail-on-miss``), 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from olive_eval import __version__
from olive_eval.errors import ConfigError, OliveEvalError, UsageError

EXIT_OK, EXIT_MODEL_FAILED, EXIT_BAD_CONFIG, EXIT_GOALS_MISSED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="olive-eval",
        description="Evaluate a baseline model and candidates, check goals against the baseline, rank them.",
    )
    parser.add_argument(
        "command",
        nargs="?",
        default="run",
        help="run (default): evaluate a config; report OUTPUT_DIR: write report.html from a run's results; "
        "schema: print the run config's JSON Schema; olive-script: print the path an Olive workflow's evaluator "
        "user_script names to use olive-eval as its evaluator",
    )
    parser.add_argument("folder", nargs="?", type=Path, help="with report: the output folder of a run")
    parser.add_argument("--config", type=Path, help="run config JSON file")
    parser.add_argument(
        "--output-dir",
        type=Path,
        help="where results.json goes (default: the config's output_dir, else ./olive-eval-output)",
    )
    parser.add_argument(
        "--allow-download",
        action="store_true",
        help="let datasets, models and tokenizers missing from the local Hugging Face cache be downloaded",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="evaluate every model: neither read nor write the result cache"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run in the same output folder: keep the models it finished, unless the "
        "config changed what they depend on",
    )
    parser.add_argument(
        "--executor",
        help="where each model is evaluated, in place of the config's executor type: local (this process), "
        "process (a fresh child process per model: a crash fails only that model) or ray",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress on stderr, neither bars nor lines (warnings still show)"
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="a timestamped line per stage on stderr instead of live progress bars (bars show only when stderr "
        "is a terminal; the table on stdout and results.json never hold them)",
    )
    parser.add_argument(
        "--report",
        action="store_true",
        help="after the run, write report.html beside results.json (charts: needs the 'report' extra)",
    )
    parser.add_argument(
        "--fail-on-miss",
        nargs="?",
        const=True,
        metavar="NAME[,NAME...]",
        help="gate a CI job: exit 3 when no candidate meets every goal or, given names, when one of those "
        "candidates misses a goal (a failed candidate misses them all); results.json is written first. "
        "Replaces the config's fail_on_miss",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks (of each model failure, too)")
    parser.add_argument("--version", action="version", version=f"olive-eval {__version__}")
    return parser


def _command_error(command: str) -> str:
    """An unknown command; ``olive-eval run.json`` (a config without --config) gets told how to call it."""
    if command.endswith(".json") or Path(command).is_file():
        return f"olive-eval: error: give the config with --config: olive-eval --config {command}"
    return (
        f"olive-eval: error: unknown command '{command}'; commands: run, report, schema, olive-script "
        "(see olive-eval --help)"
    )


def schema_json() -> str:
    from olive_eval.config import RunConfig

    return json.dumps(RunConfig.model_json_schema(by_alias=True), indent=2) + "\n"


def olive_script() -> tuple[int, str]:
    """The exit code and the line to print for ``olive-eval olive-script``: the plugin's user_script path,
    found without importing Olive (seconds), which must be installed for the path to be of use."""
    import importlib.util

    if importlib.util.find_spec("olive") is None:
        return EXIT_BAD_CONFIG, 'olive-eval: error: Olive is not installed: pip install "olive-eval[olive]"'
    return EXIT_OK, str(Path(__file__).resolve().parent / "olive" / "user_script.py")


def report(folder: Path | None, debug: bool = False) -> int:
    """``olive-eval report OUTPUT_DIR``: report.html from the run saved there; exit 2 in one line when the
    folder holds no results of ours or plotly is missing."""
    if folder is None:
        print("olive-eval: error: give the run's output folder: olive-eval report OUTPUT_DIR", file=sys.stderr)
        return EXIT_BAD_CONFIG
    try:
        page = _write_report(folder)
    except KeyboardInterrupt:
        print(f"olive-eval: {REPORT_INTERRUPTED}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OliveEvalError as exc:
        if debug:
            raise
        print(f"olive-eval: error: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    except Exception as exc:  # a fault of ours: one line, the traceback with --debug
        if debug:
            raise
        print(f"olive-eval: error: {_report_fault(exc)}", file=sys.stderr)
        return EXIT_MODEL_FAILED
    print(f"Report: {page}")
    return EXIT_OK


def _report_fault(exc: Exception) -> str:
    """An unforeseen failure while writing the report, with where it was raised (``--debug`` shows all)."""
    import traceback

    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return f"the report could not be written: {type(exc).__name__}: {exc}{where} (--debug shows the traceback)"


#: Ctrl-C while the page was written: the page is written whole or not at all (a temporary file renamed).
REPORT_INTERRUPTED = "interrupted while writing the report; report.html was not written"


def _write_report(folder: Path) -> Path:
    """The page, or KeyboardInterrupt for a Ctrl-C anywhere in its writing, even one a library swallowed (and
    then failed on, or went on without): such a page is not written."""
    from olive_eval.interrupt import SigintSeen
    from olive_eval.report.html import write_report

    with SigintSeen() as seen:
        try:
            return write_report(folder, stopped=seen)
        except Exception:
            if seen():
                raise KeyboardInterrupt from None
            raise


def _report_missing() -> str | None:
    """Why ``--report`` cannot work (plotly missing), found before any model runs."""
    import importlib.util

    if importlib.util.find_spec("plotly") is None:
        return "--report needs the 'plotly' package; install it with: pip install 'olive-eval[report]'"
    return None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_intermixed_args(argv)
    if args.command not in ("run", "report", "schema", "olive-script"):
        print(_command_error(args.command), file=sys.stderr)
        return EXIT_BAD_CONFIG
    if args.folder is not None and args.command != "report":
        print(f"olive-eval: error: unexpected argument '{args.folder}' (see olive-eval --help)", file=sys.stderr)
        return EXIT_BAD_CONFIG
    if args.fail_on_miss is not None and args.command != "run":
        print(f"olive-eval: error: --fail-on-miss gates a run; '{args.command}' does not take it", file=sys.stderr)
        return EXIT_BAD_CONFIG
    if args.command == "report":
        return report(args.folder or args.output_dir, debug=args.debug)
    if args.command == "schema":
        sys.stdout.write(schema_json())
        return EXIT_OK
    if args.command == "olive-script":
        code, line = olive_script()
        print(line, file=sys.stdout if code == EXIT_OK else sys.stderr)
        return code
    if args.config is None:
        print(
            "olive-eval: error: --config is required (e.g. olive-eval --config configs/quickstart.json)",
            file=sys.stderr,
        )
        return EXIT_BAD_CONFIG
    if args.report and (missing := _report_missing()) is not None:
        print(f"olive-eval: error: {missing}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    try:
        gate = _gate_flag(args.fail_on_miss)
    except ValueError as exc:
        print(f"olive-eval: error: --fail-on-miss: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    try:
        from olive_eval.api import Evaluation, RunInterrupted
        from olive_eval.engine.session.session import FAIL_ON_MISS_SOURCE
        from olive_eval.progress import for_stderr

        progress = for_stderr(quiet=args.quiet, bars=not args.no_progress)

        def warn(message: str) -> None:
            if args.quiet:
                print(f"olive-eval: warning: {message}", file=sys.stderr, flush=True)
            else:
                progress("warning", message)

        with Evaluation(
            args.config,
            output_dir=args.output_dir,
            progress=progress,
            allow_download=args.allow_download or None,
            cache=not args.no_cache,
            resume=args.resume,
            warn=warn,
            executor=args.executor,
            fail_on_miss=gate,
        ) as session:
            gate = session.config.fail_on_miss
            result = session.run()
    except ConfigError as exc:
        if args.debug:
            raise
        if exc.source == FAIL_ON_MISS_SOURCE:  # the flag's value, not the config's
            print(f"olive-eval: error: --fail-on-miss: {exc.message}", file=sys.stderr)
        else:
            print(f"olive-eval: config error: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    except UsageError as exc:
        if args.debug:
            raise
        print(f"olive-eval: error: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    except OliveEvalError as exc:
        if args.debug:
            raise
        print(f"olive-eval: error: {exc}", file=sys.stderr)
        return EXIT_MODEL_FAILED
    except RunInterrupted as exc:
        print(f"olive-eval: {_interrupted(exc)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print("olive-eval: interrupted before any model ran; nothing was written", file=sys.stderr)
        return EXIT_INTERRUPTED
    try:
        return _finish(args, result, gate)
    except KeyboardInterrupt:  # the table or the report: results.json is written already
        results = Path(result.output_dir or ".") / "results.json"
        print(f"olive-eval: interrupted after the run; {results} holds the run's results", file=sys.stderr)
        return EXIT_INTERRUPTED


def _gate_flag(value: str | bool | None) -> bool | list[str] | None:
    """``--fail-on-miss`` as the session takes it: True bare, the names given, None when not given."""
    from olive_eval.config.gate import parse_names

    return value if value is None or value is True else parse_names(str(value))


def _finish(args: argparse.Namespace, result: Any, gate: bool | list[str]) -> int:
    """The table, where the results are, write errors and the report, once the run is over; the exit code:
    a results.json not written is 1, then missed goals (``gate``) 3, then a failed model or report 1."""
    from olive_eval.report.console import render

    if args.debug:
        for name, model in result.models.items():
            for text in model.tracebacks:
                print(f"--- {name}: traceback of a failure\n{text}", file=sys.stderr, end="")
    print(render(result))
    results = Path(result.output_dir or ".") / "results.json"
    if str(results) not in result.write_errors:
        print(f"\nResults: {results}")
    for path, error in result.write_errors.items():
        print(f"olive-eval: error: cannot write {path}: {error}", file=sys.stderr)
    code = EXIT_MODEL_FAILED if result.failed or result.write_errors else EXIT_OK
    if args.report and str(results) not in result.write_errors:
        try:
            print(f"Report: {_write_report(results.parent)}")
        except KeyboardInterrupt:
            print(
                f"olive-eval: interrupted while writing the report; {results} holds the run's results; "
                "report.html was not written",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED
        except Exception as exc:  # the run's results stand; the page could not be written
            if args.debug:
                raise
            message = f"the report: {exc}" if isinstance(exc, OliveEvalError) else _report_fault(exc)
            print(f"olive-eval: error: {message}", file=sys.stderr)
            code = EXIT_MODEL_FAILED
    return _gated(result, gate, code, written=str(results) not in result.write_errors)


def _gated(result: Any, gate: bool | list[str], code: int, written: bool) -> int:
    """The exit code once the goals are judged: missed goals print one line and exit 3, unless results.json,
    the evidence a CI job keeps, could not be written (1)."""
    from olive_eval.decide.gate import goals_missed

    missed = goals_missed(result, gate)
    if missed is None:
        return code
    print(f"olive-eval: goals missed: {missed}", file=sys.stderr)
    return EXIT_GOALS_MISSED if written else EXIT_MODEL_FAILED


def _interrupted(exc: Any) -> str:
    """What an interrupted run left behind, said plainly."""
    result = exc.result
    path = Path(result.output_dir or ".") / "results.json"
    where = f"interrupted while evaluating '{exc.model}'" if exc.model else "interrupted"
    done = [name for name, m in result.models.items() if m.status in ("ok", "partial", "failed")]
    if str(path) in result.write_errors:
        return f"{where}; {path} could not be written: {result.write_errors[str(path)]}"
    if not done:
        return f"{where}; no model finished; {path} records the run as interrupted"
    return f"{where}; {path} holds the {len(done)} model(s) finished so far: {', '.join(done)}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

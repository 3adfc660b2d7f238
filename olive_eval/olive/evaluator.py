"""The Olive evaluator that runs olive-eval: one session per workflow evaluator, across Olive's calls.

Olive builds a new evaluator object for every model it evaluates, so the session lives beside the class,
keyed by everything that defines it (the olive-eval config, Olive's metrics, the accelerator, the output
folder). The first model Olive hands over is the session's baseline (Olive evaluates its input model first);
each later one is a candidate, with paired goals and latency rounds against that baseline.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
from pathlib import Path
from typing import Any

from olive.evaluator.olive_evaluator import OliveEvaluator
from olive.evaluator.registry import Registry

from olive_eval.config.loader import load_run_config, read_json
from olive_eval.config.metric_set import joint_key
from olive_eval.engine.session.session import Evaluation
from olive_eval.errors import ConfigError
from olive_eval.olive.data_configs import FillIn, input_fill_in
from olive_eval.olive.handlers import model_config, model_name
from olive_eval.olive.metrics import check_mirrors, config_from_olive, metric_result

#: The evaluator ``type`` a workflow names.
EVALUATOR_TYPE = "OliveEval"
DEFAULT_OUTPUT_DIR = "olive-eval-output"
_SOURCE = "<olive evaluator>"

logger = logging.getLogger(__name__)


class _Sessions:
    """The open sessions of this process, closed (their output folders released) at exit."""

    def __init__(self) -> None:
        self._open: dict[str, tuple[Evaluation, dict[str, tuple[int, bool | None]]]] = {}
        self._names: dict[str, dict[str, str]] = {}
        self.lock = threading.Lock()
        atexit.register(self.close_all)

    def get(self, key: str) -> tuple[Evaluation, dict[str, tuple[int, bool | None]]] | None:
        return self._open.get(key)

    def put(self, key: str, session: Evaluation, measured: dict[str, tuple[int, bool | None]]) -> None:
        self._open[key] = (session, measured)
        self._names[key] = {}

    def name_for(self, key: str, path: str, wanted: str) -> str:
        """One name per model file in a session; a second file that would take a name gets a suffix."""
        names = self._names[key]
        if path in names:
            return names[path]
        taken = set(names.values())
        name, n = wanted, 2
        while name in taken:
            name, n = f"{wanted}-{n}", n + 1
        names[path] = name
        return name

    def close_all(self) -> None:
        for session, _ in self._open.values():
            session.close()
        self._open.clear()


SESSIONS = _Sessions()


class OliveEvalEvaluator(OliveEvaluator):
    """``"evaluators": {"e": {"type": "OliveEval", "user_script": <olive-eval olive-script>, ...}}``.

    ``olive_eval_config``: an olive-eval run config (a path, or the dict inline) whose metrics and data configs
    are measured; the workflow's ``metrics`` are then the objectives Olive ranks by, each one a sub-type of
    that config. Without it, the workflow's Olive metrics are measured. (Not ``config``: Olive takes a dict
    with ``type`` and ``config`` keys for a resource path.) ``output_dir``: where olive-eval
    writes results.json and the instance records (default ``olive-eval-output``).
    """

    def __init__(
        self, olive_eval_config: str | dict[str, Any] | None = None, output_dir: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__()
        if kwargs:
            raise ConfigError(
                f"unknown key(s) {', '.join(sorted(kwargs))}; an OliveEval evaluator takes: olive_eval_config, "
                "output_dir",
                path="evaluators.<name>",
                source=_SOURCE,
            )
        self.config = olive_eval_config
        self.output_dir = output_dir

    def evaluate(
        self,
        model: Any,
        metrics: list[Any],
        device: Any = "cpu",
        execution_providers: str | list[str] | None = None,
    ) -> Any:
        providers = [execution_providers] if isinstance(execution_providers, str) else list(execution_providers or [])
        device_name = str(getattr(device, "value", device)).lower()
        key = self._key(metrics, device_name, providers)
        path = str(getattr(model, "model_path", None) or id(model))
        with SESSIONS.lock:
            held = SESSIONS.get(key)
            if held is None:
                name = model_name(getattr(model, "model_path", None), "input_model")
                session = self._open(model_config(model, name), metrics, device_name, providers, input_fill_in(model))
                measured = _measured(session)
                if self.config is not None:
                    check_mirrors(metrics, measured)
                SESSIONS.put(key, session, measured)
                SESSIONS.name_for(key, path, name)
                result = session.baseline()
                logger.info("olive-eval: baseline '%s' evaluated into %s", name, session.output_dir)
                return metric_result(result.model, name, measured)
            session, measured = held
            name = SESSIONS.name_for(key, path, model_name(getattr(model, "model_path", None), "model"))
            if name in session.result.models and session.result.models[name].status != "pending":
                # the same file again (a second workflow run in this process, Olive's evaluation cache cleared):
                # the session's result for it, with no work and no second name
                return metric_result(session.result.models[name], name, measured)
            try:
                candidate = model_config(model, name)
            except ConfigError as exc:
                session.record_failure(name, str(exc))
                raise
            result = session.evaluate(candidate)
            return metric_result(result.model, name, measured)

    def _key(self, metrics: list[Any], device: str, providers: list[str]) -> str:
        config = str(Path(self.config).resolve()) if isinstance(self.config, (str, Path)) else self.config
        olive_metrics = [metric.to_json() for metric in metrics]
        return json.dumps([config, olive_metrics, device, providers, self._out_dir()], sort_keys=True, default=str)

    def _out_dir(self) -> str:
        return str(Path(self.output_dir or DEFAULT_OUTPUT_DIR).resolve())

    def _open(
        self, baseline: dict[str, Any], metrics: list[Any], device: str, providers: list[str], fill_in: FillIn | None
    ) -> Evaluation:
        """The session of the first model handed over; ``fill_in``: what Olive's run config copied from it (the
        input model) into the workflow's data configs."""
        if self.config is None:
            run: dict[str, Any] = config_from_olive(metrics, fill_in)
            base_dir = Path.cwd()
        elif isinstance(self.config, dict):
            run, base_dir = dict(self.config), Path.cwd()
        else:
            path = Path(self.config).resolve()
            run, base_dir = read_json(path), path.parent
            if not isinstance(run, dict):
                raise ConfigError("the config must be a JSON object", source=str(path))
        run = {**run, "input_model": baseline, "candidates": [], "device": "gpu" if device == "gpu" else "cpu"}
        if providers:
            run["execution_providers"] = providers
        source = str(self.config) if isinstance(self.config, (str, Path)) else _SOURCE
        config = load_run_config(run, base_dir=base_dir, source=source)
        return Evaluation(config, output_dir=self._out_dir(), warn=logger.warning)


def _measured(session: Evaluation) -> dict[str, tuple[int, bool | None]]:
    """Joint key → (priority, higher_is_better) of every sub-type the session's config measures."""
    return {
        joint_key(metric, sub): (sub.priority, sub.higher_is_better)
        for metric in session.config.all_metrics
        for sub in metric.sub_types
    }


def register() -> None:
    """Put :class:`OliveEvalEvaluator` in Olive's evaluator registry, once: Olive imports a workflow's
    user_script more than once, and a second registration of another object under the name is refused."""
    current = Registry.get(EVALUATOR_TYPE)
    if current is OliveEvalEvaluator:
        return
    if current is not None:
        raise ConfigError(
            f"Olive evaluator type '{EVALUATOR_TYPE}' is registered already by {current.__module__}.{current.__name__}"
        )
    Registry.register(EVALUATOR_TYPE)(OliveEvalEvaluator)

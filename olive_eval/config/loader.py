"""Reading a run config from a file, a dict or an object, then checking what it points at."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from olive_eval.config.errors import from_validation_error
from olive_eval.config.run import RunConfig
from olive_eval.data.components import registries
from olive_eval.data.olive_script import register_script_components
from olive_eval.data.postprocess import user_post_process
from olive_eval.data.preprocess import user_pre_process
from olive_eval.errors import ConfigError
from olive_eval.user_module import load_function, load_user_module


def strip_trailing_commas(text: str) -> str:
    """Blank out commas that directly precede ``}`` or ``]`` (outside strings), keeping every position.

    Olive's own documentation has a custom-metric example with a trailing comma; we accept it.
    """
    chars = list(text)
    in_string = escaped = False
    pending: int | None = None
    for i, ch in enumerate(chars):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string, pending = True, None
        elif ch == ",":
            pending = i
        elif ch in "}]":
            if pending is not None:
                chars[pending] = " "
            pending = None
        elif not ch.isspace():
            pending = None
    return "".join(chars)


def decode_config(raw: bytes) -> str:
    """The config's text: UTF-8 (with or without a BOM), or UTF-16/32, which JSON allows and editors write."""
    encoding = json.detect_encoding(raw)
    try:
        return raw.decode("utf-8-sig" if encoding == "utf-8" else encoding)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"not UTF-8 text: byte 0x{raw[exc.start]:02X} at line {line} cannot be decoded; save the file as UTF-8"
        ) from None


def read_json(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError("config file not found", source=str(path)) from None
    except IsADirectoryError:
        raise ConfigError("is a directory; --config takes a JSON file", source=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read config: {exc.strerror}", source=str(path)) from None
    try:
        text = decode_config(raw)
    except ConfigError as exc:
        raise exc.with_source(str(path)) from None
    try:
        return parse_json(strip_trailing_commas(text))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", source=str(path)
        ) from None
    except ConfigError as exc:
        raise exc.with_source(str(path)) from None


def parse_json(text: str) -> Any:
    """``json.loads``, refusing an object that gives a key twice: json keeps the last value and drops the
    first without a word (two ``metrics`` lists would lose the first)."""
    repeated: dict[int, tuple[dict[str, Any], str]] = {}  # id → (object, key); the object kept alive

    def to_dict(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj and id(obj) not in repeated:
                repeated[id(obj)] = (obj, key)
            obj[key] = value
        return obj

    data = json.loads(text, object_pairs_hook=to_dict)
    # an object dropped as a repeated key's first value lies below an object that repeats a key
    for where, value in json_nodes(data):
        if isinstance(value, dict) and id(value) in repeated:
            key = repeated[id(value)][1]
            raise ConfigError(
                f"'{key}' is given twice in the same object (JSON readers keep the last one and silently drop "
                "the first); give it once",
                path=f"{where}.{key}" if where else key,
            )
    return data


def json_nodes(data: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every value in ``data`` with its JSON path, parents before children, in document order."""
    yield path, data
    if isinstance(data, dict):
        items = ((f"{path}.{key}" if path else str(key), value) for key, value in data.items())
    elif isinstance(data, (list, tuple)):
        items = ((f"{path}[{i}]", value) for i, value in enumerate(data))
    else:
        return
    for where, value in items:
        yield from json_nodes(value, where)


def find_non_finite(data: Any) -> tuple[str, float] | None:
    """The JSON path and value of the first NaN or infinity in ``data`` (Python's json reads ``NaN``,
    ``Infinity`` and ``-Infinity`` literals, which JSON itself does not allow). Only a config that holds one has
    the paths built (:func:`json_nodes`, a generator per node: the most of a warm ``evaluate()``'s check)."""
    if not _holds_non_finite(data):
        return None
    return next(
        ((where, value) for where, value in json_nodes(data) if isinstance(value, float) and not math.isfinite(value)),
        None,
    )


def _holds_non_finite(data: Any) -> bool:
    """Whether a NaN or infinity lies anywhere in ``data`` (the values :func:`json_nodes` goes over)."""
    if isinstance(data, float):
        return not math.isfinite(data)
    if isinstance(data, dict):
        values: Iterable[Any] = data.values()
    elif isinstance(data, (list, tuple)):
        values = data
    else:
        return False
    return any(_holds_non_finite(value) for value in values)


def load_run_config(
    config: RunConfig | dict[str, Any] | str | Path,
    *,
    check_files: bool = True,
    allow_download: bool | None = None,
    base_dir: Path | None = None,
    source: str = "<config>",
) -> RunConfig:
    """Validate ``config`` (a path, a dict or a RunConfig) and check the files it names exist. A dict's relative
    paths resolve against ``base_dir`` (default: the working directory); ``source`` names it in errors."""
    if isinstance(config, RunConfig):
        return config
    if isinstance(config, (str, Path)):
        path = Path(config)
        data, source, base_dir = read_json(path), str(path), path.resolve().parent
    elif isinstance(config, dict):
        data, base_dir = config, base_dir or Path.cwd()
    else:
        raise TypeError(f"config must be a path, a dict or a RunConfig, not {type(config).__name__}")
    if not isinstance(data, dict):
        raise ConfigError("the config must be a JSON object", source=source)
    if allow_download is not None:
        data = {**data, "allow_download": allow_download}
    found = find_non_finite(data)
    if found is not None:
        where, value = found
        literal = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        raise ConfigError(f"{literal} is not a number JSON allows; write a finite number", path=where, source=source)
    try:
        import_user_scripts(data, base_dir)
    except ConfigError as exc:
        raise exc.with_source(source) from None
    data = with_metric_paths_resolved(data, base_dir)
    try:
        run = RunConfig.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc, source) from None
    run.resolve_paths(base_dir, source)
    if check_files:
        try:
            check_references(run)
        except ConfigError as exc:
            raise exc.with_source(source) from None
    return run


#: Keys of a sub-type's metric_config (at any depth) that name local files or folders: a judge's script, a judged
#: model's folder, a reward model's tokenizer folder, an embedding model. Relative ones are read beside the config
#: file, as every other path is.
METRIC_PATH_KEYS = frozenset({"user_script", "script_dir", "model_path", "processor_path", "embedding_model"})


def _resolve_config_paths(value: Any, base_dir: Path) -> Any:
    """``value`` with each relative path under :data:`METRIC_PATH_KEYS` that exists beside the config made absolute."""
    if isinstance(value, list):
        return [_resolve_config_paths(v, base_dir) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key in METRIC_PATH_KEYS and isinstance(item, str) and not Path(item).is_absolute():
            out[key] = str(base_dir / item) if (base_dir / item).exists() else item
        else:
            out[key] = _resolve_config_paths(item, base_dir)
    return out


def with_metric_paths_resolved(data: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """``data`` with the paths in its sub-types' metric_config resolved (before validation: a metric checks
    its files, e.g. a judge's script, when its config is validated)."""
    evaluator = data.get("evaluator")
    holder = evaluator if isinstance(evaluator, dict) else data
    metrics = holder.get("metrics")
    if not isinstance(metrics, list):
        return data
    fixed = []
    for metric in metrics:
        if isinstance(metric, dict) and isinstance(metric.get("sub_types"), list):
            subs = [
                {**sub, "metric_config": _resolve_config_paths(sub["metric_config"], base_dir)}
                if isinstance(sub, dict) and isinstance(sub.get("metric_config"), dict)
                else sub
                for sub in metric["sub_types"]
            ]
            metric = {**metric, "sub_types": subs}
        fixed.append(metric)
    if holder is evaluator:
        return {**data, "evaluator": {**evaluator, "metrics": fixed}}
    return {**data, "metrics": fixed}


def import_user_scripts(data: dict[str, Any], base_dir: Path) -> None:
    """Import the user scripts a config names before validating it, so the metrics and aggregations
    they register (``@register_metric``, ``@register_aggregation``) are known to the schema."""

    def load(block: Any, where: str) -> None:
        if not isinstance(block, dict) or not isinstance(block.get("user_script"), str):
            return
        script = Path(block["user_script"])
        script = script if script.is_absolute() else base_dir / script
        script_dir = block.get("script_dir")
        folder = None if not isinstance(script_dir, str) else Path(script_dir)
        if folder is not None and not folder.is_absolute():
            folder = base_dir / folder
        try:
            load_user_module(script, folder)
        except ConfigError as exc:
            raise ConfigError(exc.message, path=f"{where}.user_script") from None

    evaluator = data.get("evaluator")
    load(evaluator, "evaluator")
    metrics_key = "evaluator.metrics" if isinstance(evaluator, dict) else "metrics"
    metrics = evaluator.get("metrics") if isinstance(evaluator, dict) else data.get("metrics")
    for i, metric in enumerate(metrics if isinstance(metrics, list) else []):
        if isinstance(metric, dict):
            load(metric.get("user_config"), f"{metrics_key}[{i}].user_config")
    for i, dc in enumerate(data.get("data_configs") or []):
        if isinstance(dc, dict):
            load(dc, f"data_configs[{i}]")
            register_user_components(dc, base_dir, f"data_configs[{i}]")


def register_user_components(dc: dict[str, Any], base_dir: Path, where: str) -> None:
    """A data config may name a function of its user script as a pre- or post-process ``type`` (Olive's
    way): such a function becomes a component of that name. The components the script registers with Olive's
    data Registry, and a plain function named as the dataset or dataloader, are called as Olive calls them
    (:mod:`olive_eval.data.olive_script`)."""
    if not isinstance(dc.get("user_script"), str):
        return
    script = Path(dc["user_script"])
    module = load_user_module(script if script.is_absolute() else base_dir / script)
    register_script_components(dc, module, script)
    for key, kind in (("pre_process_data_config", "pre-process"), ("post_process_data_config", "post-process")):
        part = dc.get(key)
        name = part.get("type") if isinstance(part, dict) else None
        if not isinstance(name, str) or name in registries[kind]:
            continue
        func = getattr(module, name, None)
        if callable(func):
            make = user_pre_process if kind == "pre-process" else user_post_process
            registries[kind].register(name, make(func, name), origin=f"{script}:{name}")


def check_references(run: RunConfig) -> None:
    """Model files, user scripts and the functions they must define, before any model runs."""
    for i, model in enumerate(run.models()):
        check_model_references(model, "input_model" if i == 0 else f"candidates[{i - 1}]", run.allow_download)
    for i, metric in enumerate(run.all_metrics):
        uc = metric.user_config
        where = f"{'evaluator.metrics' if run.evaluator else 'metrics'}[{i}].user_config"
        for key in ("evaluate_func", "metric_func"):
            name = getattr(uc, key)
            if name is not None and uc.user_script is not None:
                _check_function(uc.user_script, name, uc.script_dir, f"{where}.{key}")
    for i, dc in enumerate(run.data_configs):
        check = getattr(dc.load_dataset_config, "source_problem", None)
        problem = check(run.allow_download) if check is not None else None
        if problem is not None:
            key, message = problem
            raise ConfigError(message, path=f"data_configs[{i}].load_dataset_config.{key}")


def check_model_references(model: Any, where: str, allow_download: bool) -> None:
    """A model's files and the user functions it names (``where``: its JSON path)."""
    problem = model.path_problem(allow_download)
    if problem is not None:
        key, message = problem
        raise ConfigError(message, path=f"{where}.{key}")
    for key, script, name, script_dir in model.user_functions():
        _check_function(script, name, script_dir, f"{where}.{key}")


def _check_function(script: Path | None, name: str, script_dir: Path | None, where: str) -> None:
    if script is None:
        return
    try:
        load_function(script, name, script_dir)
    except ConfigError as exc:
        raise ConfigError(exc.message, path=where) from None

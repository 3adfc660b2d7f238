"""What a cached model result depends on, as canonical JSON and its digest.

The key covers: the cache format, olive-eval's version, Python's and the versions of the packages
olive-eval uses; the model's config (without its name: a renamed model with the same files reuses its
entry) and the content of every local file it names; the run's device and providers; every metric (with
its metric_config, user_config, data config, filters and interval settings, but without goals and
priorities, which change no value); the data configs those metrics read; and the content of every local
file any of these name (model files, data files, user scripts, processor folders). Timing metrics and the
timing settings count only when timings are cached.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from olive_eval.config.run import RunConfig
from olive_eval.engine.cache.content_hash import tree_sha256
from olive_eval.runtimes.base import ModelConfig

#: Bump when the entry layout or the key's contents change: older entries then miss (2: per-example files).
CACHE_FORMAT = 2

#: Packages that can change values without being requirements of olive-eval.
EXTRA_PACKAGES = ("onnxruntime-gpu", "onnxruntime-genai", "huggingface-hub", "tokenizers", "scipy")


def olive_eval_version() -> str:
    try:
        return metadata.version("olive-eval")
    except metadata.PackageNotFoundError:
        from olive_eval import __version__

        return __version__


@functools.cache
def package_names() -> tuple[str, ...]:
    """olive-eval's requirements (its extras too, all but ``dev``: test tools) and :data:`EXTRA_PACKAGES`."""
    try:
        requires = metadata.requires("olive-eval") or []
    except metadata.PackageNotFoundError:
        requires = []
    names = {
        re.split(r"[\s<>=!~;\[(]", req, maxsplit=1)[0].lower().replace("_", "-")
        for req in requires
        if not re.search(r"""extra\s*==\s*['"]dev['"]""", req)
    }
    return tuple(sorted(names | set(EXTRA_PACKAGES)))


@functools.cache
def package_versions() -> dict[str, str]:
    """Installed versions of :func:`package_names` (an uninstalled one is left out: its absence is the fact)."""
    out = {}
    for name in package_names():
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


#: Config keys naming folders whose content is not an input: where samples are written, and a folder put on
#: ``sys.path`` for a user script (the script itself is hashed; hashing all of its folder could mean a project).
NOT_INPUTS = ("sample_log_dir", "script_dir")


def _local_paths(value: Any) -> set[Path]:
    """Absolute paths of existing files or folders named anywhere in a JSON value (configs hold resolved paths)."""
    if isinstance(value, dict):
        return set().union(*(_local_paths(v) for k, v in value.items() if k not in NOT_INPUTS))
    if isinstance(value, list):
        return set().union(*(_local_paths(v) for v in value))
    if isinstance(value, str) and Path(value).is_absolute() and Path(value).exists():
        return {Path(value)}
    return set()


def _without_ranking(metric: dict[str, Any]) -> dict[str, Any]:
    subs = [{k: v for k, v in sub.items() if k not in ("goal", "priority")} for sub in metric["sub_types"]]
    return {**metric, "sub_types": subs}


def key_payload(run: RunConfig, model: ModelConfig, *, include_timing: bool) -> dict[str, Any]:
    """Everything the model's cached values depend on, as JSON (paths of local files with their content hashes)."""
    metrics = [m for m in run.all_metrics if include_timing or not m.timed]
    data_names = {m.data_config for m in metrics if m.data_config is not None}
    model_json = model.model_dump(mode="json", exclude={"name"})
    metrics_json = [_without_ranking(m.model_dump(mode="json")) for m in metrics]
    data_json = [dc.model_dump(mode="json") for dc in run.data_configs if dc.name in data_names]
    scripts = [run.evaluator.user_script] if run.evaluator is not None and run.evaluator.user_script else []
    paths = _local_paths([model_json, metrics_json, data_json, [str(p) for p in scripts]])
    paths |= {Path(p) for p in model.files()} | {script for _, script, _, _ in model.user_functions()}
    folder = model.processor_folder()
    if folder is not None and folder.exists():
        paths.add(folder)
    payload: dict[str, Any] = {
        "format": CACHE_FORMAT,
        "olive_eval": olive_eval_version(),
        "python": platform.python_version(),
        "packages": package_versions(),
        "model": model_json,
        "device": run.device,
        "providers": [[name, options] for name, options in run.default_providers()],
        "metrics": metrics_json,
        "data_configs": data_json,
        "files": {str(p): tree_sha256(p) for p in sorted(paths, key=str) if p.exists()},
    }
    if include_timing:
        payload["timing"] = run.timing.model_dump(mode="json")
    if any(m.metric_type.reads_baseline for m in metrics):  # fidelity: the model's outputs against the baseline's
        baseline = run.input_model
        payload["baseline"] = {
            "model": baseline.model_dump(mode="json", exclude={"name"}),
            "files": {str(p): tree_sha256(p) for p in sorted(baseline.files(), key=str) if p.exists()},
        }
    return payload


def digest(payload: dict[str, Any]) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()

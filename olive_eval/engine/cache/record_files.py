"""A model's per-example files (``instances/`` and the sample log), kept with its result cache entry.

A model served from the cache is not evaluated, so nothing would write its records: the files its evaluation
wrote are read when its result is cached and written again, byte for byte, through the run's record writer when
it is served (to the model's own folder, which may differ: a model renamed, or repeating another of the run).
Files are named ``instances/<metric>`` and ``samples/<metric>`` by the metric's name (the key covers every
metric, so a served entry has the same metrics as the run), and a baseline's kept outputs (for the fidelity
metrics of its candidates) ``outputs/<path below its outputs folder>``.
"""

from __future__ import annotations

from pathlib import Path

from olive_eval.config import RunConfig
from olive_eval.records.writer import InstanceWriter

#: The kinds of record file, as the names in a cache entry start.
KINDS = ("instances", "samples")
#: How the names of a baseline's kept outputs start.
OUTPUTS = "outputs/"


def _paths(run: RunConfig, writer: InstanceWriter, folder: str) -> dict[str, Path]:
    """Where each metric's record files go for the model with this folder."""
    out: dict[str, Path] = {}
    for metric in run.all_metrics:
        out[f"instances/{metric.name}"] = writer.instances_path(folder, metric.name)
        if metric.sample_log_num:
            out[f"samples/{metric.name}"] = writer.sample_log_path(folder, metric.name, metric.sample_log_dir)
    return out


def collect(run: RunConfig, writer: InstanceWriter, folder: str) -> dict[str, bytes]:
    """The record files the model's evaluation wrote (the run cleared its output folder first: those there are
    this run's), by name. A file that cannot be read is left out, as one that could not be written is."""
    out: dict[str, bytes] = {}
    paths = _paths(run, writer, folder)
    outputs = writer.outputs_dir(folder)
    if outputs.is_dir():
        paths.update({OUTPUTS + p.relative_to(outputs).as_posix(): p for p in sorted(outputs.rglob("part-*.arrow"))})
    for name, path in paths.items():
        try:
            if path.is_file():
                out[name] = path.read_bytes()
        except OSError:
            continue
    return out


def restore(run: RunConfig, writer: InstanceWriter, folder: str, records: dict[str, bytes]) -> None:
    """Write a cached model's record files to its folder, through the writer's sinks as an evaluation does."""
    by_name = {metric.name: metric for metric in run.all_metrics}
    for name, data in records.items():
        if name.startswith(OUTPUTS):
            writer.outputs_file(folder, name[len(OUTPUTS) :]).write_file(data)
            continue
        kind, metric_name = name.split("/", 1)
        metric = by_name[metric_name]
        if kind == "instances":
            sink = writer.instances(folder, metric.name)
        else:
            sink = writer.sample_log(folder, metric.name, metric.sample_log_num, metric.sample_log_dir)
        sink.write_file(data)


def is_record(run: RunConfig, name: str) -> bool:
    """Whether :func:`collect` can give ``name`` for this run: a cache entry's records must be such names."""
    if name.startswith(OUTPUTS):
        parts = name[len(OUTPUTS) :].split("/")
        return len(parts) == 2 and all(p and p not in (".", "..") for p in parts) and parts[1].startswith("part-")
    kind, _, metric = name.partition("/")
    return kind in KINDS and any(
        m.name == metric and (kind == "instances" or m.sample_log_num) for m in run.all_metrics
    )

"""What a run's numbers were measured with: versions, machine, config hash, start time and seeds.

A latency figure means little without the CPU, the thread settings and the library versions behind it;
lm-evaluation-harness records as much, and so does results.json. Versions are read from package
metadata, so recording them imports nothing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

#: Packages whose versions change what a run measures.
PACKAGES = ("olive-eval", "onnxruntime", "onnxruntime-gpu", "torch", "numpy", "transformers", "datasets", "pydantic")


def package_versions() -> dict[str, str]:
    return dict(_installed_versions())


@functools.cache
def _installed_versions() -> tuple[tuple[str, str], ...]:
    """Read once per process: package metadata takes 20-50 ms to read, on every run of a session."""
    out = []
    for name in PACKAGES:
        try:
            out.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            continue
    return tuple(out)


@functools.cache
def cpu_model() -> str:
    """The CPU's name (``/proc/cpuinfo`` on Linux, else what ``platform`` knows)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


@functools.cache
def physical_cores() -> int:
    """Physical cores: ONNX Runtime's default intra-op thread count. Logical cores when unknown."""
    try:
        import psutil

        return int(psutil.cpu_count(logical=False) or os.cpu_count() or 1)
    except ImportError:
        pass
    try:
        cores = set()
        physical = "0"
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "physical id":
                physical = value.strip()
            elif key.strip() == "core id":
                cores.add((physical, value.strip()))
        if cores:
            return len(cores)
    except OSError:
        pass
    return os.cpu_count() or 1


def gpu_names() -> list[str]:
    """GPU names from ``nvidia-smi`` (empty when there is none or it is not installed)."""
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()] if done.returncode == 0 else []


def config_sha256(source: Any) -> str:
    """Of the config file's bytes, or of a dict's canonical JSON."""
    if isinstance(source, (str, Path)):
        return hashlib.sha256(Path(source).read_bytes()).hexdigest()
    return hashlib.sha256(json.dumps(source, sort_keys=True, default=str).encode()).hexdigest()


def environment(
    *, config_source: Any, device: str, started: datetime | None = None, seeds: dict[str, int] | None = None
) -> dict[str, Any]:
    info: dict[str, Any] = {
        "olive_eval": package_versions().get("olive-eval"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "logical_cores": os.cpu_count(),
        "physical_cores": physical_cores(),
        "packages": package_versions(),
        "config_sha256": config_sha256(config_source) if config_source is not None else None,
        "started_at": (started or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "seeds": dict(seeds or {}),
    }
    if device == "gpu":
        info["gpus"] = gpu_names()
    return info

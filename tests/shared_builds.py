"""Builds shared by every test process of one pytest run: each built once, by the first process that asks.

Under pytest-xdist each worker is its own process, so a ``scope="session"`` fixture runs once per worker, and two
files needing the same slow build (an ONNX export, its quantized copies) pay for it twice when they land on two
workers. Here the build goes to a folder of the run's temporary root (the parent of each worker's base folder, the
pattern pytest-xdist documents for session fixtures run once), under a file lock: the first process builds, the
others wait on the lock and read what it wrote. A build that raises leaves no record, so the next caller builds
again (and fails with its own error).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

__all__ = ["shared_build", "shared_root", "tiny_llama"]

#: The record a finished build leaves in its folder: the names of what it built and their paths.
DONE = "built.json"


def shared_root(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder every process of this run shares: the parent of a worker's base folder under
    pytest-xdist, the base folder itself without it (whose parent is shared with other runs)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_build(
    factory: pytest.TempPathFactory, name: str, build: Callable[[Path], dict[str, Path]]
) -> dict[str, Path]:
    """What ``build(folder)`` returns, built once per run in ``<shared root>/shared-<name>``; ``build`` gets that
    folder empty and returns named paths (inside it or not). Callers get the same paths; they must not modify them."""
    root = shared_root(factory)
    folder = root / f"shared-{name}"
    done = folder / DONE
    with FileLock(str(root / f"shared-{name}.lock")):
        if not done.is_file():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half way
            folder.mkdir()
            built = build(folder)
            done.write_text(json.dumps({key: str(path) for key, path in built.items()}))
    return {key: Path(path) for key, path in json.loads(done.read_text()).items()}


#: Runs onnxruntime-genai's builder once per argument list of ``argv[1]`` (JSON), as its command line does: two
#: exports in one process pay the builder's import (torch, transformers, onnx: about 6 s of CPU) once.
_EXPORTS = """
import json, runpy, sys
for args in json.loads(sys.argv[1]):
    sys.argv = ["builder", *args]
    runpy.run_module("onnxruntime_genai.models.builder", run_name="__main__", alter_sys=True)
"""


def _export_genai(hf_folder: Path, outs: dict[str, Path]) -> dict[str, Path]:
    """The GenAI exports of ``hf_folder``, by precision into ``outs``: the command and options of
    ``tests.runtimes.llm_models.export_genai`` (the same files), every precision in one builder process."""
    runs = [
        [
            "-i",
            str(hf_folder),
            "-o",
            str(out),
            "-p",
            precision,
            "-e",
            "cpu",
            "-c",
            str(out.parent / f"cache-{precision}"),
        ]
        for precision, out in outs.items()
    ]
    done = subprocess.run([sys.executable, "-c", _EXPORTS, json.dumps(runs)], capture_output=True, text=True)
    missing = [str(out) for out in outs.values() if not (out / "genai_config.json").is_file()]
    if done.returncode != 0 or missing:
        raise RuntimeError(f"the GenAI builder failed ({done.returncode}; missing {missing}): {done.stderr[-2000:]}")
    return outs


def tiny_llama(factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The run's tiny Llama (``tests.runtimes.llm_models.build_tiny_llama``'s defaults, key ``hf``) and its fp32
    and int4 GenAI exports (keys ``fp32``, ``int4``), built once per run."""

    def build(folder: Path) -> dict[str, Path]:
        from tests.runtimes import llm_models  # torch and transformers: only for the tests that build a Llama

        hf = llm_models.build_tiny_llama(folder / "hf")
        return {"hf": hf, **_export_genai(hf, {precision: folder / precision for precision in ("fp32", "int4")})}

    return shared_build(factory, "tiny_llama", build)

"""Each model's results, cached under a key of everything its values depend on (see :mod:`cache_key`).

An entry is two files in the cache folder: ``<key>.npz`` with the evidence's arrays and the bytes of the
model's per-example files (:mod:`record_files`; loaded with ``allow_pickle=False``) and ``<key>.json`` with a
header (format, olive-eval version, key, the npz's sha256), the model's result, the evidence's manifest and
the record files' names. Nothing in an entry is pickled, so reading one
never runs code. The npz is written first and the JSON last, each through a temporary file renamed into
place, so a reader sees a whole entry or none; an entry that does not check out (corrupt, cut short,
from another version or format, for another key) is ignored with one warning, never trusted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.config.metric_set import joint_key
from olive_eval.config.run import RunConfig
from olive_eval.engine.cache import evidence_store, record_files
from olive_eval.engine.cache.cache_key import CACHE_FORMAT, digest, key_payload, olive_eval_version
from olive_eval.engine.model.unit import ModelEvaluation
from olive_eval.records.results import atomic_write_text, file_mode
from olive_eval.records.results_load import model_result_from_dict
from olive_eval.runtimes.base import ModelConfig

#: Errors that make an entry unusable (bad JSON, a cut-short or foreign npz, a malformed manifest).
_BAD_ENTRY = (OSError, ValueError, KeyError, TypeError, AttributeError, zipfile.BadZipFile, EOFError)


class ResultCache:
    """Model results by key. ``folder=None`` disables it: every ``get`` misses and ``put`` does nothing.

    A folder that cannot be created or written is reported once through ``warn`` and the cache is then
    disabled; so is one whose writes start failing later (a full disk).
    """

    def __init__(self, folder: Path | None, *, warn: Callable[[str], None]) -> None:
        self._warn = warn
        self._warned: set[str] = set()
        #: key -> the run it was made from: ``get`` builds the evidence's metric objects from its config
        self._runs: dict[str, RunConfig] = {}
        self.folder: Path | None = None
        if folder is not None:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                fd, probe = tempfile.mkstemp(prefix=".probe-", dir=folder)
                os.close(fd)
                os.unlink(probe)
            except OSError as exc:
                self._disable(folder, exc)
            else:
                self.folder = folder

    @staticmethod
    def default_folder() -> Path:
        """``$OLIVE_EVAL_CACHE_DIR``, else ``$XDG_CACHE_HOME/olive-eval``, else ``~/.cache/olive-eval``."""
        if os.environ.get("OLIVE_EVAL_CACHE_DIR"):
            return Path(os.environ["OLIVE_EVAL_CACHE_DIR"]).expanduser()
        if os.environ.get("XDG_CACHE_HOME"):
            return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "olive-eval"
        return Path.home() / ".cache" / "olive-eval"

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def key(self, run: RunConfig, model: ModelConfig, *, include_timing: bool) -> str:
        """The hex digest that ``model``'s results under ``run`` are cached by (see :mod:`cache_key`).

        ``include_timing``: whether timing metrics and settings count (true only when timings are cached).
        A disabled cache hashes nothing and returns ``""``. ``get`` takes only keys made here.
        """
        if self.folder is None:
            return ""
        key = digest(key_payload(run, model, include_timing=include_timing))
        self._runs[key] = run
        return key

    def _paths(self, key: str) -> tuple[Path, Path]:
        assert self.folder is not None
        if not re.fullmatch(r"[0-9a-f]{64}", key):
            raise ValueError(f"not a cache key: {key!r}")
        base = self.folder / key[:2] / key
        return base.with_suffix(".json"), base.with_suffix(".npz")

    def get(self, key: str) -> ModelEvaluation | None:
        """The cached evaluation, or None: a miss, a disabled cache, or an entry that does not check out.

        The result's ``priority`` fields follow the current config (priorities are not in the key); its goals,
        ``goals_met`` and ``pareto`` are as stored: they depend on the baseline and are for the run to redo.
        """
        run = self._runs.get(key)
        if self.folder is None or run is None:
            return None
        json_path, npz_path = self._paths(key)
        if not json_path.exists():
            return None
        try:
            return self._read(key, run, json_path, npz_path)
        except _BAD_ENTRY as exc:
            self._warn_once(f"cache entry {json_path} ignored: {_reason(exc)}")
            return None

    def _read(self, key: str, run: RunConfig, json_path: Path, npz_path: Path) -> ModelEvaluation | None:
        try:
            entry = json.loads(json_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON ({exc})") from None
        if not isinstance(entry, dict):
            raise ValueError("not a cache entry")
        if entry.get("format") != CACHE_FORMAT or entry.get("olive_eval") != olive_eval_version():
            raise ValueError(
                f"written by olive-eval {entry.get('olive_eval')} (format {entry.get('format')}); "
                f"this is {olive_eval_version()} (format {CACHE_FORMAT})"
            )
        if entry.get("key") != key:
            raise ValueError(f"it holds key {entry.get('key')}, not its own")
        blob = npz_path.read_bytes()
        if hashlib.sha256(blob).hexdigest() != entry["arrays_sha256"]:
            raise ValueError(f"{npz_path.name} does not match its header (cut short or replaced)")
        result = model_result_from_dict(entry["result"], where="result", nonfinite_strings=False)
        subs = {joint_key(m, s): (m, s) for m in run.all_metrics for s in m.sub_types}
        with np.load(io.BytesIO(blob), allow_pickle=False) as arrays:
            evidence = evidence_store.decode(
                entry["evidence"],
                arrays,
                lambda k: subs[k][0].scorer(subs[k][1], run.source_dir),
                lambda k, batch: subs[k][0].metric_type.statistic(subs[k][1].name, batch),
            )
            records = _records(entry["records"], arrays, lambda name: record_files.is_record(run, name))
        for name, sub_result in result.metrics.items():
            if name in subs:
                sub_result.priority = subs[name][1].priority
        return ModelEvaluation(result, evidence, records)

    def put(self, key: str, evaluation: ModelEvaluation) -> None:
        """Store an evaluation under ``key``: what it holds is what ``get`` gives back (store one without
        timings unless the key was made with ``include_timing``). Only a full evaluation (``ok``) is stored:
        a failed or partial one is tried again next time. Evidence that only pickle could store leaves the
        model uncached, with one warning. The evaluation's ``records`` (its per-example files) are stored with it."""
        if self.folder is None or not key or evaluation.result.status != "ok":
            return
        try:
            manifest, arrays = evidence_store.encode(evaluation.evidence)
            records = {}
            for name, data in evaluation.records.items():
                records[name] = f"record{len(records)}"  # evidence arrays are named a0, a1...
                arrays[records[name]] = np.frombuffer(data, dtype=np.uint8)
            result = dataclasses.asdict(evaluation.result)
            buffer = io.BytesIO()
            np.savez(buffer, **arrays)
            blob = buffer.getvalue()
            header: dict[str, Any] = {
                "format": CACHE_FORMAT,
                "olive_eval": olive_eval_version(),
                "key": key,
                "arrays_sha256": hashlib.sha256(blob).hexdigest(),
            }
            entry = {**header, "result": result, "evidence": manifest, "records": records}
            text = json.dumps(entry, allow_nan=True)
        except (evidence_store.Unstorable, TypeError, ValueError) as exc:
            self._warn_once(f"a model result was not cached: {exc}")
            return
        json_path, npz_path = self._paths(key)
        try:
            json_path.parent.mkdir(exist_ok=True)
            _atomic_write_bytes(npz_path, blob)
            atomic_write_text(json_path, text)
        except OSError as exc:
            folder = self.folder
            self.folder = None
            self._disable(folder, exc)

    def _disable(self, folder: Path, exc: OSError) -> None:
        self._warn_once(f"cache folder {folder} is not writable ({_reason(exc)}); running without a cache")

    def _warn_once(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self._warn(message)


def _records(manifest: dict[str, str], arrays: Any, is_record: Callable[[str], bool]) -> dict[str, bytes]:
    """The record files of an entry's manifest (name -> array), each one the run's metrics could write."""
    out = {}
    for name, array in manifest.items():
        if not is_record(name):
            raise ValueError(f"it holds a record file '{name}' of no metric of the run")
        data = arrays[array]
        if data.dtype != np.uint8 or data.ndim != 1:
            raise ValueError(f"its record file '{name}' is not bytes")
        out[name] = data.tobytes()
    return out


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text or type(exc).__name__


def _atomic_write_bytes(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), file_mode())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

"""Per-example records: ``instances/<model>/<metric>.parquet`` (:mod:`olive_eval.records.parquet`) and Olive's
``sample_log_num`` sample log (JSON lines, :mod:`olive_eval.records.sinks`): which file each model's metric
writes, opened here.

Records are written a chunk of batches at a time as a pass goes (memory does not grow with the dataset), each
column converted to JSON text in one call (:mod:`olive_eval.records.json_text`), to a temporary file that
replaces the final one when the pass is done, so a reader never sees half a file.
"""

from __future__ import annotations

from pathlib import Path

from olive_eval.records.output_dir import folder_names
from olive_eval.records.sinks import HeldSink, RecordSink


class InstanceWriter:
    """Opens the per-example files of a run's output directory.

    ``model_folder`` arguments are the folders :func:`olive_eval.records.output_dir.folder_names` gave each
    model; metric files are named the same way, so no two models or metrics ever share a file. The first
    file that cannot be written is kept in :attr:`errors` (one is enough to tell a full disk); the run
    goes on without the files.
    """

    def __init__(self, output_dir: Path, metric_names: list[str] | None = None) -> None:
        self.output_dir = output_dir
        self._metric_files = folder_names(metric_names or [])
        #: The first file that could not be written, with the OS error (empty when all were written).
        self.errors: dict[str, str] = {}

    def _file(self, metric: str) -> str:
        return self._metric_files.get(metric) or folder_names([metric])[metric]

    def _failed(self, path: Path, exc: OSError) -> None:
        if not self.errors:
            self.errors[str(path)] = exc.strerror or str(exc)

    def instances_path(self, model_folder: str, metric: str) -> Path:
        return self.output_dir / "instances" / model_folder / f"{self._file(metric)}.parquet"

    def sample_log_path(self, model_folder: str, metric: str, log_dir: Path | None) -> Path:
        root = log_dir if log_dir is not None else self.output_dir / "samples"
        return root / model_folder / f"{self._file(metric)}_samples.jsonl"

    def outputs_dir(self, model_folder: str) -> Path:
        """Where a baseline keeps the outputs its candidates are compared with (fidelity), one folder per pass."""
        return self.output_dir / "outputs" / model_folder

    def outputs_file(self, model_folder: str, relative: str) -> RecordSink:
        """A kept output file restored whole (a baseline served from the result cache)."""
        return RecordSink(self.outputs_dir(model_folder) / relative, self._failed, out_dir=self.output_dir)

    def instances(self, model_folder: str, metric: str) -> RecordSink:
        """A Parquet file (:mod:`olive_eval.records.parquet`, imported here: pyarrow only when records are written)."""
        from olive_eval.records.parquet import ParquetSink

        return ParquetSink(self.instances_path(model_folder, metric), self._failed, out_dir=self.output_dir)

    def sample_log(self, model_folder: str, metric: str, n: int, log_dir: Path | None) -> RecordSink:
        """Olive's format: the first ``n`` records ``{"index", "prediction", "target"}``."""
        path = self.sample_log_path(model_folder, metric, log_dir)
        return RecordSink(path, self._failed, limit=n, out_dir=self.output_dir)


class HeldRecords:
    """An :class:`InstanceWriter` look-alike whose files are :class:`HeldSink` objects, by (metric, kind)."""

    def __init__(self) -> None:
        self.sinks: dict[tuple[str, str], HeldSink] = {}

    def instances(self, model_folder: str, metric: str) -> HeldSink:
        return self.sinks.setdefault((metric, "instances"), HeldSink())

    def sample_log(self, model_folder: str, metric: str, n: int, log_dir: Path | None) -> HeldSink:
        return self.sinks.setdefault((metric, "samples"), HeldSink(n))

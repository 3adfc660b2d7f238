"""Where each candidate disagrees most with the baseline: for each fidelity sub-type with per-example scores, the
examples with the worst score (lowest agreement or cosine, highest divergence or error, by the sub-type's
direction), with the candidate's prediction, the baseline's and the reference.

A fidelity score already compares with the baseline, so the candidate's own file ranks the examples. The
baseline's prediction is read from the baseline's file of the same metric at the same example index (every
model's file holds its own predictions), with its own scores: the identity (1 for agreement, 0 for a divergence
or a WER), so an example the candidate scores as the baseline scores itself agrees and is not listed. Scores
that are all 0 or 1 (top-1 agreement, exact match) count the examples that differ (from 1 or 0 without the
baseline's file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from olive_eval.records.results import RunResult
from olive_eval.report.html.data_examples import MAX_ROWS, TOP
from olive_eval.report.html.data_fidelity import FidelityMetric
from olive_eval.report.html.instance_files import InstanceFiles, aligned_rows, short_text


@dataclass
class DisagreementRow:
    index: int | str
    score: float
    candidate_prediction: str
    baseline_prediction: str
    reference: str


@dataclass
class Disagreement:
    """One candidate's worst examples on one fidelity sub-type."""

    metric: str
    column: str  # the sub-type
    key: str  # its results.json key
    candidate: str
    higher_is_better: bool
    scored: int  # examples with a score
    #: Examples whose score is not the baseline's own (None: not known, no baseline file and scores not 0/1)
    differ: int | None = None
    #: Scores of 0 and 1 only (an answer is the baseline's or not): ``differ`` counts answers that changed
    binary: bool = False
    rows: list[DisagreementRow] = field(default_factory=list)


@dataclass
class Disagreements:
    tables: list[Disagreement] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def differ(self, candidate: str, key: str) -> Disagreement | None:
        """The candidate's table of ``key`` when its scores (0 or 1) count the answers that changed."""
        return next((t for t in self.tables if (t.candidate, t.key) == (candidate, key) and t.binary), None)


def _direction(result: RunResult, key: str) -> bool | None:
    return next((m.metrics[key].higher_is_better for m in result.models.values() if key in m.metrics), None)


class _Baseline:
    """The baseline's file of one metric, if there is one: its predictions and its own scores (the identity: 1 for
    agreement, 0 for a divergence) by example index."""

    def __init__(self, reader: InstanceFiles, path: Path | None) -> None:
        self.reader, self.path = reader, path

    def rows(self, cand_index: np.ndarray) -> np.ndarray:
        """The baseline file's row of each of the candidate's rows (-1: none, or no file)."""
        where = np.full(len(cand_index), -1)
        if self.path is not None:
            base_rows, cand_rows = aligned_rows(self.reader.numbers(self.path)["index"], cand_index)
            where[cand_rows] = base_rows
        return where

    def scores(self, column: str, where: np.ndarray) -> np.ndarray | None:
        """Its own per-example scores at ``where`` (NaN where it has none); None without a file or that column."""
        numbers = self.reader.numbers(self.path) if self.path is not None else {}
        if column not in numbers:
            return None
        out = np.full(len(where), np.nan)
        found = where >= 0
        out[found] = numbers[column][where[found]]
        return out

    def predictions(self, found: np.ndarray) -> list[str]:
        if self.path is None:
            return [""] * len(found)
        shown = iter([short_text(v) for v in self.reader.texts(self.path, "prediction", found[found >= 0])])
        return [next(shown) if f >= 0 else "" for f in found]


def disagreements(
    output_dir: Path, result: RunResult, names: list[str], metrics: list[FidelityMetric], top: int = TOP
) -> Disagreements:
    """Each evaluated candidate's worst examples on each fidelity sub-type its instance file scores per example."""
    out = Disagreements()
    root = output_dir / "instances"
    reader = InstanceFiles()
    candidates = [n for n in names if n != result.baseline and result.models[n].evaluated]
    tables = max(1, len(candidates) * sum(len(m.keys) for m in metrics))
    top = max(3, min(top, MAX_ROWS // tables))
    base_model = result.models.get(result.baseline)
    base_folder = base_model.folder if base_model is not None else None
    for metric in metrics:
        base_path = root / (base_folder or "") / f"{metric.stem}.parquet"
        if base_folder is None or not base_path.is_file() or not reader.readable(base_path):
            if candidates:
                out.missing.append(
                    f"{metric.name}: no instance file of the baseline's, whose predictions are not shown"
                )
            baseline = _Baseline(reader, None)
        else:
            baseline = _Baseline(reader, base_path)
        for name in candidates:
            out.tables += _candidate(reader, root, result, name, metric, baseline, top, out.missing)
    return out


def _candidate(
    reader: InstanceFiles,
    root: Path,
    result: RunResult,
    name: str,
    metric: FidelityMetric,
    baseline: _Baseline,
    top: int,
    missing: list[str],
) -> list[Disagreement]:
    model = result.models[name]
    path = root / (model.folder or "") / f"{metric.stem}.parquet"
    if model.folder is None or not path.is_file():
        missing.append(f"{name}: no instance file for {metric.name} (instances/{model.folder}/{metric.stem}.parquet)")
        return []
    if not reader.readable(path):
        missing.append(f"{name}: instances/{model.folder}/{metric.stem}.parquet is not in a layout this page reads")
        return []
    numbers = reader.numbers(path)
    where = baseline.rows(numbers["index"])
    out = []
    for column, key in metric.keys.items():
        sub = model.metrics.get(key)
        higher = _direction(result, key)
        if column not in numbers or higher is None:
            if sub is not None and sub.measured:  # a failed one says why in the values: nothing to add here
                missing.append(f"{name}: {key} has no per-example scores to list")
            continue
        table = Disagreement(metric.name, column, key, name, higher, 0)
        out.append(_worst(reader, path, numbers, where, table, baseline, top))
    return out


def _worst(
    reader: InstanceFiles,
    path: Path,
    numbers: dict[str, np.ndarray],
    where: np.ndarray,
    table: Disagreement,
    baseline: _Baseline,
    top: int,
) -> Disagreement:
    """Fill ``table``: the examples scored, those that differ (0/1 scores), the worst rows. An example whose score
    is the baseline's own on it (the identity) agrees, and is not listed."""
    scores = numbers[table.column]
    identity = baseline.scores(table.column, where)
    scored = np.flatnonzero(~np.isnan(scores))
    values = scores[scored]
    table.scored = len(scored)
    table.binary = bool(len(values)) and bool(np.isin(values, (0.0, 1.0)).all())
    if identity is None and table.binary:
        identity = np.full(len(scores), 1.0 if table.higher_is_better else 0.0)
    if identity is not None:
        differs = values != identity[scored]
        table.differ = int(differs.sum())
        scored, values = scored[differs], values[differs]
    order = np.argsort(values if table.higher_is_better else -values, kind="stable")[:top]
    rows = scored[order]
    if not len(rows):
        return table
    index = numbers["index"][rows]
    cand = [short_text(v) for v in reader.texts(path, "prediction", rows)]
    refs = [short_text(v) for v in reader.texts(path, "references", rows)]
    base = baseline.predictions(where[rows])
    for i, row in enumerate(rows):
        shown = index[i] if isinstance(index[i], str) else int(index[i])
        table.rows.append(DisagreementRow(shown, float(scores[row]), cand[i], base[i], refs[i]))
    return table

"""Pure extraction of the worst examples from the instance files: for each candidate, metric file and
per-example score column, the examples where the candidate is furthest worse than the baseline, with both
predictions and the reference; counts of how many got worse or better, and of answers flipped right to wrong.

Only the index and score columns of every file are read whole (pyarrow, numbers only); predictions and
references are read for the few rows shown. Missing files are listed, and the rest still comes out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from olive_eval.records.output_dir import folder_names
from olive_eval.records.results import RunResult
from olive_eval.report.html.data_run import metric_keys
from olive_eval.report.html.instance_files import InstanceFiles, aligned_rows, short_text

#: Examples shown per candidate and score column, and the most over the whole page (the page stays small).
TOP = 10
MAX_ROWS = 1500


@dataclass
class ExampleRow:
    index: int | str  # the example's index, or lm-eval's "task #document (filter)"
    candidate_score: float
    baseline_score: float
    candidate_prediction: str
    baseline_prediction: str
    reference: str


@dataclass
class WorstExamples:
    """One candidate's worst examples on one per-example score, against the baseline."""

    metric: str  # the instance file's name (the metric's)
    column: str  # the sub-type
    candidate: str
    higher_is_better: bool | None  # None: direction unknown, the largest changes shown
    compared: int
    worse: int
    better: int
    #: Scores of 0 and 1 only (right or wrong): (right -> wrong, wrong -> right) counts.
    flips: tuple[int, int] | None
    rows: list[ExampleRow] = field(default_factory=list)


@dataclass
class Examples:
    tables: list[WorstExamples] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _files(root: Path, folder: str | None) -> dict[str, Path]:
    if folder is None or not (root / folder).is_dir():
        return {}
    return {p.stem: p for p in sorted((root / folder).glob("*.parquet"))}


def _directions(result: RunResult) -> dict[tuple[str, str], bool | None]:
    """(metric file name, sub-type) -> higher is better, from the joint keys ``<metric>-<sub-type>``."""
    out: dict[tuple[str, str], bool | None] = {}
    for key in metric_keys(result):
        sub = next(m.metrics[key] for m in result.models.values() if key in m.metrics)
        for cut in range(len(key)):
            if key[cut] == "-":
                prefix, column = key[:cut], key[cut + 1 :]
                out.setdefault((folder_names([prefix])[prefix], column), sub.higher_is_better)
    return out


def _flips(base: np.ndarray, cand: np.ndarray, higher: bool | None) -> tuple[int, int] | None:
    if higher is None or not (np.isin(base, (0.0, 1.0)).all() and np.isin(cand, (0.0, 1.0)).all()):
        return None
    right = 1.0 if higher else 0.0
    return int(((base == right) & (cand != right)).sum()), int(((base != right) & (cand == right)).sum())


def worst_examples(
    output_dir: Path, result: RunResult, names: list[str], top: int = TOP, skip: set[str] | frozenset[str] = frozenset()
) -> Examples:
    """Each candidate's worst examples against the baseline, per metric file and score column; not those of the
    files named in ``skip`` (their stems)."""
    out = Examples()
    root = output_dir / "instances"
    base_model = result.models.get(result.baseline)
    if base_model is None or not base_model.evaluated:
        out.missing.append("the baseline was not evaluated: no examples to compare against")
        return out
    base_files = _files(root, base_model.folder)
    candidates = [n for n in names if n != result.baseline and result.models[n].evaluated]
    if not base_files:
        out.missing.append(
            f"no instance files for the baseline under {root / (base_model.folder or '')} (none written, "
            "or the results came from the cache or an earlier run)"
        )
        return out
    base_files = {stem: path for stem, path in base_files.items() if stem not in skip}
    reader = InstanceFiles()
    unread = [path for path in base_files.values() if not reader.readable(path)]
    out.missing += [f"{path.relative_to(output_dir)}: not in a per-example layout this page reads" for path in unread]
    base_files = {stem: path for stem, path in base_files.items() if path not in unread}
    columns = {stem: reader.score_columns(path) for stem, path in base_files.items()}
    tables = max(1, len(candidates) * sum(len(c) for c in columns.values()))
    top = max(3, min(top, MAX_ROWS // tables))
    directions = _directions(result)
    for name in candidates:
        cand_files = _files(root, result.models[name].folder)
        for stem, base_path in base_files.items():
            cand_path = cand_files.get(stem)
            if cand_path is None:
                out.missing.append(f"{name}: instances/{result.models[name].folder}/{stem}.parquet is missing")
                continue
            if not reader.readable(cand_path):
                out.missing.append(f"{cand_path.relative_to(output_dir)}: not in a per-example layout this page reads")
                continue
            present = set(reader.score_columns(cand_path))
            b_rows, c_rows = aligned_rows(reader.numbers(base_path)["index"], reader.numbers(cand_path)["index"])
            for column in columns[stem]:
                if column not in present:
                    continue
                table = _worst(reader, stem, column, name, base_path, cand_path, b_rows, c_rows, top, directions)
                out.tables.append(table)
        out.missing += [
            f"{name}: {stem}.parquet has no baseline file to compare with"
            for stem in cand_files
            if stem not in base_files and stem not in skip
        ]
    return out


def _worst(
    reader: InstanceFiles,
    stem: str,
    column: str,
    name: str,
    base_path: Path,
    cand_path: Path,
    b_rows: np.ndarray,
    c_rows: np.ndarray,
    top: int,
    directions: dict[tuple[str, str], bool | None],
) -> WorstExamples:
    # lm-eval's "no filter" may also be written out in a sub-type's name (task/metric,none)
    higher = directions.get((stem, column), directions.get((stem, f"{column},none")))
    base = reader.numbers(base_path)[column][b_rows]
    cand = reader.numbers(cand_path)[column][c_rows]
    ok = np.isfinite(base) & np.isfinite(cand)
    change = cand - base
    signed = change if higher is True else -change if higher is False else -np.abs(change)
    signed = np.where(ok, signed, np.inf)
    table = WorstExamples(
        stem,
        column,
        name,
        higher,
        int(ok.sum()),
        int((signed < 0).sum()) if higher is not None else 0,
        int(((signed > 0) & ok).sum()) if higher is not None else 0,
        _flips(base[ok], cand[ok], higher),
    )
    worse = np.flatnonzero(signed < 0)
    if len(worse) > top:
        worse = worse[np.argpartition(signed[worse], top)[:top]]
    worse = worse[np.argsort(signed[worse], kind="stable")]
    if not len(worse):
        return table
    index = reader.numbers(base_path)["index"][b_rows[worse]]
    cand_pred = [short_text(v) for v in reader.texts(cand_path, "prediction", c_rows[worse])]
    base_pred = [short_text(v) for v in reader.texts(base_path, "prediction", b_rows[worse])]
    refs = [short_text(v) for v in reader.texts(base_path, "references", b_rows[worse])]
    for i, row in enumerate(worse):
        key = index[i] if isinstance(index[i], str) else int(index[i])
        table.rows.append(ExampleRow(key, float(cand[row]), float(base[row]), cand_pred[i], base_pred[i], refs[i]))
    return table

"""The report's fidelity section: each model's accuracy beside its fidelity to the baseline, the answers that
changed, and the examples where each candidate disagrees most, checked against the models' own outputs (their
logits in the accuracy metric's instance file) with scipy's softmax."""

from __future__ import annotations

import json
import re
import shutil
from html import escape, unescape
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy.special import log_softmax

from olive_eval import evaluate
from olive_eval.records.results_load import read_results
from olive_eval.report.console import format_value
from olive_eval.report.html.instance_files import short_text
from tests.helpers import write_jsonl

from .conftest import report

TOP = 10


def table_rows(page: str, table_id: str) -> list[list[str]]:
    """The cells (inner HTML) of each body row of a table."""
    match = re.search(rf"<table[^>]*id=['\"]{re.escape(table_id)}['\"][^>]*>(.*?)</table>", page, re.S)
    assert match is not None, f"no table {table_id}"
    body = match.group(1).split("<tbody>", 1)[1]
    return [re.findall(r"<td>(.*?)</td>", row, re.S) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def logits(run: Path, model: str) -> np.ndarray:
    """The model's outputs on every example, by index, from the accuracy metric's instance file."""
    table = pq.read_table(run / "instances" / model / "acc.parquet")
    index = np.asarray(table.column("index").to_pylist())
    return np.asarray(table.column("prediction").to_pylist(), dtype=np.float64)[np.argsort(index)]


def per_example(run: Path, name: str) -> dict[str, np.ndarray]:
    """Each fidelity measure of the candidate, per example, computed here from the two models' outputs."""
    base, cand = logits(run, "base"), logits(run, name)
    log_p, log_q = log_softmax(base, axis=1), log_softmax(cand, axis=1)
    top2 = (
        [set(row) for row in np.argsort(-base, axis=1)[:, :2]],
        [set(row) for row in np.argsort(-cand, axis=1)[:, :2]],
    )
    return {
        "top1_agreement": (base.argmax(1) == cand.argmax(1)).astype(float),
        "kl_divergence": (np.exp(log_p) * (log_p - log_q)).sum(1),
        "cosine_similarity": (base * cand).sum(1) / (np.linalg.norm(base, axis=1) * np.linalg.norm(cand, axis=1)),
        "topk_agreement": np.asarray([len(a & b) / 2 for a, b in zip(*top2, strict=True)]),
    }


def worst(scores: np.ndarray, higher: bool, identity: float | None) -> list[int]:
    """The examples to list: not at the identity, worst first, ties by index."""
    keep = np.flatnonzero(scores != identity) if identity is not None else np.arange(len(scores))
    order = np.argsort(scores[keep] if higher else -scores[keep], kind="stable")
    return keep[order][:TOP].tolist()


def test_fidelity_sits_beside_accuracy_for_every_model(fidelity_run: Path) -> None:
    page, _ = report(fidelity_run)
    result = read_results(fidelity_run / "results.json")
    header = page[page.index("id='oe-fidelity'") :]
    header = re.findall(r"<th>(.*?)</th>", header[: header.index("</thead>")])
    keys = ["acc-accuracy_score", "fid-top1_agreement", "fid-kl_divergence", "fid-cosine_similarity"]
    assert header[1:] == [*keys, "fid-topk_agreement"]  # no size: it is neither
    rows = table_rows(page, "oe-fidelity")
    assert [unescape(re.sub("<[^>]+>", "", r[0])) for r in rows] == ["base (baseline)", "near", "far"]
    for row, name in zip(rows, ("base", "near", "far"), strict=True):
        for cell, key in zip(row[1:5], keys, strict=True):
            assert cell.startswith(format_value(result.models[name].metrics[key].value)), (name, key, cell)
    base_acc = result.models["base"].metrics["acc-accuracy_score"].value
    near = result.models["near"].metrics
    delta = near["acc-accuracy_score"].value - base_acc
    assert f"Δ {format_value(delta)}" in rows[1][1] and "[" in rows[1][2]  # a change; an interval
    assert "oe-met" in rows[1][2] and "oe-miss" in rows[2][2]  # the top-1 agreement goal, met and missed


@pytest.mark.parametrize("name", ["near", "far"])
def test_answers_that_changed_are_counted_from_the_outputs_and_said_beside_the_accuracy_change(
    fidelity_run: Path, name: str
) -> None:
    page, _ = report(fidelity_run)
    result = read_results(fidelity_run / "results.json")
    changed = int((per_example(fidelity_run, name)["top1_agreement"] == 0).sum())
    assert changed > 0
    differ = f"{changed} of 120 ({changed / 120:.1%}) differ from the baseline&#x27;s"
    row = next(r for r in table_rows(page, "oe-fidelity") if r[0] == name)
    assert differ in row[2] and differ not in row[3]  # top-1 agreement's 0/1 scores; not KL's
    acc = result.models[name].metrics["acc-accuracy_score"].value
    base = result.models["base"].metrics["acc-accuracy_score"].value
    line = re.search(rf"<li><b>{name}</b>: (.*?)</li>", page)
    assert line is not None
    assert line.group(1) == (
        f"acc-accuracy_score {format_value(acc)} (Δ {format_value(acc - base)} from the baseline), "
        f"but fid-top1_agreement: {differ}"
    )


@pytest.mark.parametrize(
    ("sub_type", "higher", "identity"),
    [
        ("top1_agreement", True, 1.0),
        ("kl_divergence", False, None),
        ("cosine_similarity", True, None),
        ("topk_agreement", True, 1.0),
    ],
)
@pytest.mark.parametrize("name", ["near", "far"])
def test_the_examples_listed_are_those_that_disagree_most(
    fidelity_run: Path, name: str, sub_type: str, higher: bool, identity: float | None
) -> None:
    page, _ = report(fidelity_run)
    scores = per_example(fidelity_run, name)[sub_type]
    rows = table_rows(page, f"disagree-fid-{sub_type}-{name}")
    assert [int(r[0]) for r in rows] == worst(scores, higher, identity)
    caption = page[page.index(f"fid: {sub_type} — {name}") :]
    caption = caption[: caption.index("</p>")]
    if sub_type == "topk_agreement":  # not 0/1: how many are not at the identity, when not all
        assert f"120 examples scored, {int((scores != 1).sum())} not at the baseline&#x27;s own score" in caption
    elif sub_type != "top1_agreement":
        assert caption.endswith(f"120 examples scored; the {'lowest' if higher else 'highest'} {sub_type} first")
    assert [float(r[1]) for r in rows] == pytest.approx(scores[[int(r[0]) for r in rows]], rel=1e-3, abs=1e-4)
    base, cand = logits(fidelity_run, "base"), logits(fidelity_run, name)
    labels = pq.read_table(fidelity_run / "instances" / "base" / "acc.parquet").column("references").to_pylist()
    for r in rows:
        i = int(r[0])
        as_stored = [float(np.float32(v)) for v in cand[i]], [float(np.float32(v)) for v in base[i]]
        assert (unescape(r[2]), unescape(r[3])) == (
            f"<code>{short_text(as_stored[0])}</code>",
            f"<code>{short_text(as_stored[1])}</code>",
        )
        assert r[4] == f"<code>{labels[i]}</code>"  # the data's label: fidelity's own metrics read none


def test_the_worst_examples_section_leaves_fidelity_to_its_own_section(fidelity_run: Path) -> None:
    page, _ = report(fidelity_run)
    assert 'id="examples-acc-accuracy_score-near"' in page
    assert "examples-fid-" not in page and "fid.parquet has no baseline file" not in page
    assert "<a href='#sec-fidelity'>Fidelity</a>" in page


def test_a_run_without_fidelity_metrics_has_no_fidelity_section(quickstart_run: Path) -> None:
    page, _ = report(quickstart_run)
    assert "sec-fidelity" not in page and "oe-fidelity" not in page


def copied(run: Path, tmp_path: Path, edit=None) -> Path:
    """The run copied (its results.json pointing at the copy), results.json edited by ``edit``."""
    out = tmp_path / "out"
    shutil.copytree(run, out)
    data = json.loads((out / "results.json").read_text())
    data["output_dir"] = str(out)
    if edit is not None:
        edit(data)
    (out / "results.json").write_text(json.dumps(data))
    (out / "report.html").unlink(missing_ok=True)
    return out


def test_a_results_json_without_its_config_has_no_fidelity_section(fidelity_run: Path, tmp_path: Path) -> None:
    out = copied(fidelity_run, tmp_path, lambda data: data["environment"].pop("config"))
    page, _ = report(out)
    assert "sec-fidelity" not in page
    assert 'id="examples-fid-top1_agreement-near"' in page  # its files are compared as any metric's


def test_metrics_under_olives_evaluator_block_are_read_too(fidelity_run: Path, tmp_path: Path) -> None:
    def to_evaluator(data: dict) -> None:
        config = data["environment"]["config"]
        config["evaluator"] = {"metrics": config.pop("metrics")}

    page, _ = report(copied(fidelity_run, tmp_path, to_evaluator))
    assert len(table_rows(page, "oe-fidelity")) == 3


def test_without_the_baselines_file_the_candidates_examples_are_still_listed(
    fidelity_run: Path, tmp_path: Path
) -> None:
    out = copied(fidelity_run, tmp_path)
    (out / "instances" / "base" / "fid.parquet").unlink()
    page, _ = report(out)
    assert "fid: no instance file of the baseline&#x27;s, whose predictions are not shown" in page
    top1 = per_example(fidelity_run, "near")["top1_agreement"]
    rows = table_rows(page, "disagree-fid-top1_agreement-near")
    assert [int(r[0]) for r in rows] == worst(top1, True, 1.0)  # 0/1 scores: 1 is the identity
    assert all(r[3] == "<code></code>" for r in rows)
    kl = per_example(fidelity_run, "near")["kl_divergence"]
    assert [int(r[0]) for r in table_rows(page, "disagree-fid-kl_divergence-near")] == worst(kl, False, None)


TEXT_MODELS = '''
from pathlib import Path


class Writer:
    """Writes each question back, marked up, with a number; every ``noise``-th gets another number."""

    def __init__(self, noise):
        self.noise = noise

    def __call__(self, batch):
        factor = lambda i: 8 if self.noise and i % self.noise == 0 else 7
        return [f"<b>{q}</b> {int(i) * factor(int(i))}" for i, q in zip(batch["i"], batch["q"])]


def load(model_path):
    return Writer(int(Path(model_path).read_text()))
'''


def test_text_fidelity_lists_both_texts_escaped_with_the_baselines_as_the_reference(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(TEXT_MODELS)
    write_jsonl(tmp_path / "d.jsonl", [{"i": i, "q": f"q{i}"} for i in range(12)])

    def model(name: str, noise: int) -> dict:
        (tmp_path / f"{name}.txt").write_text(str(noise))
        return {
            "type": "PythonModel",
            "name": name,
            "user_script": str(tmp_path / "models.py"),
            "model_loader": "load",
            "model_path": str(tmp_path / f"{name}.txt"),
        }

    evaluate(
        {
            "input_model": model("base", 0),
            "candidates": [model("every3", 3), model("copy", 0)],
            "data_configs": [
                {
                    "name": "d",
                    "load_dataset_config": {"data_name": "json", "data_files": str(tmp_path / "d.jsonl")},
                    "pre_process_data_config": {"type": "skip_pre_process"},
                    "dataloader_config": {"batch_size": 5},
                }
            ],
            "metrics": [
                {
                    "name": "agree",
                    "type": "fidelity",
                    "sub_types": [{"name": "exact_match", "priority": 1}, {"name": "wer"}],
                }
            ],
            "output_dir": str(tmp_path / "out"),
        }
    )
    page, _ = report(tmp_path / "out")
    rows = table_rows(page, "disagree-agree-exact_match-every3")
    assert [int(r[0]) for r in rows] == [3, 6, 9]  # example 0: 0 * 8 is 0 * 7
    for r in rows:
        i = int(r[0])
        base = escape(f"<b>q{i}</b> {i * 7}")
        assert r[2:] == [
            f"<code>{escape(f'<b>q{i}</b> {i * 8}')}</code>",
            f"<code>{base}</code>",
            f"<code>{base}</code>",
        ]
    assert "3 of 12 (25.0%) differ from the baseline&#x27;s" in page
    assert [int(r[0]) for r in table_rows(page, "disagree-agree-wer-every3")] == [3, 6, 9]  # WER's 0 is the identity
    assert "<b>q3</b>" not in page
    copy = page[page.index("agree: exact_match — copy") :]
    assert copy.index("Every example scores as the baseline does.") < copy.index("<h3>")
    assert "disagree-agree-exact_match-copy" not in page and "0 of 12 (0.0%) differ" in copy

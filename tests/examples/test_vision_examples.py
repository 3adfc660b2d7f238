"""The OCR and charts examples: the shipped data is what the generators write, the configs validate, and the
readers (Tesseract) answer from real OCR of a rendered document and chart, scored by the registered metrics."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pyarrow.parquet as pq
from PIL import Image

from olive_eval import compute_metric
from olive_eval.config import load_run_config

ROOT = Path(__file__).resolve().parents[2]


def module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def test_the_shipped_data_is_what_the_generators_write():
    for script in ("examples/ocr/make_documents.py", "examples/charts/make_charts.py"):
        done = subprocess.run([sys.executable, str(ROOT / script), "--check"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr or done.stdout


def test_the_configs_validate_with_their_task_checks():
    ocr = load_run_config(ROOT / "configs" / "ocr.json")
    assert [m.display_name() for m in ocr.models()] == ["tesseract_full", "tesseract_downscaled", "tesseract_fast"]
    assert ocr.data_config("pages").pre_process_data_config.task == "vision-ocr"
    charts = load_run_config(ROOT / "configs" / "charts.json")
    assert charts.data_config("charts").pre_process_data_config.task == "vision-chart-qa"


def test_the_document_reader_reads_a_rendered_page():
    make = module(ROOT / "examples" / "ocr" / "make_documents.py")
    reader = module(ROOT / "user_scripts" / "vision_ocr.py").load_reader("psm=3,scale=1")
    lines = ["REGISTRATION FORM", "Name: Laura Dubois", "City: Lakeside", "Phone: 555-631-2223"]
    image = Image.open(io.BytesIO(make.render(lines))).convert("RGB")
    questions = ["Read the document.", "What is the name?", "What is the phone?", "What is the title?"]
    got = reader({"image": [image] * 4, "question": questions})
    truth = "\n".join(lines)
    assert compute_metric("word_sort_ratio", got[:1], [truth]) == 1.0
    assert compute_metric("exact_match", got[1:], [["Laura Dubois"], ["555-631-2223"], ["Registration form"]]) == 1.0


def test_the_chart_reader_reads_a_rendered_chart():
    make = module(ROOT / "examples" / "charts" / "make_charts.py")
    table = pq.read_table(ROOT / "examples" / "charts" / "data" / "charts.parquet").to_pylist()[:8]
    reader = module(ROOT / "user_scripts" / "vision_charts.py").load_chart_reader("psm=11,scale=1")
    images = [Image.open(io.BytesIO(row["image"]["bytes"])).convert("RGB") for row in table]
    got = reader({"image": images, "question": [row["question"] for row in table]})
    answers = [row["answer"] for row in table]
    # the labels are rounded: relaxed accuracy forgives that, an exact number does not
    assert compute_metric("relaxed_accuracy", got, answers) >= 0.75
    assert compute_metric("relaxed_accuracy", got, answers, tolerance=0) < 0.75
    assert make.N_CHARTS == 16

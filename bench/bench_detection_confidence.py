"""What a confident mAP goal costs: the detection example run plain, then with a 95 % paired-bootstrap goal.

Both runs are ``configs/detection.json`` as shipped (the numpy shape detector at full and half resolution;
mAP, mAR and latency) on a freshly rendered set of ``--images`` images: the plain run has the goal
``max-degradation 0.05`` on ``map``, the confident run the same goal with ``"confidence": 0.95`` (2,000
paired resamples, the default). Each timing is the median of ``--repeat`` whole ``evaluate`` calls
(model loading, the detector over every image, matching, the latency rounds, and for the confident run
the bootstrap). ``--no-latency`` leaves the latency metric out, so the bootstrap weighs more.

A resample re-accumulates precision and recall from the per-image matching statistics; matching runs
once per model. The printed ratio confident / plain is the cost of the confidence (target <= 3).

Run: ``python bench/bench_detection_confidence.py`` (about a minute on 2 cores), ``--images 2`` for the
smallest set.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from olive_eval import evaluate

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "detection"


def configs(data: Path, out: Path, latency: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """The example's config, plain and with a confident goal on ``map``."""
    plain = json.loads((REPO / "configs" / "detection.json").read_text())
    plain["data_configs"][0]["load_dataset_config"]["data_files"] = str(data)
    for model in (plain["input_model"], *plain["candidates"]):
        model["user_script"] = str(EXAMPLE / "detector.py")
    if not latency:
        plain["evaluator"]["metrics"] = [m for m in plain["evaluator"]["metrics"] if m["type"] != "latency"]
    plain["output_dir"] = str(out / "plain")
    confident = copy.deepcopy(plain)
    confident["evaluator"]["metrics"][0]["sub_types"][0]["goal"]["confidence"] = 0.95
    confident["output_dir"] = str(out / "confident")
    return plain, confident


def timed_run(config: dict[str, Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = evaluate(copy.deepcopy(config))
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=300, help="images in the set (default 300, as the example)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each config (median)")
    parser.add_argument("--no-latency", action="store_true", help="leave the latency metric out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "shapes.jsonl"
        make = [sys.executable, str(EXAMPLE / "make_data.py"), "--images", str(args.images), "--out", str(data)]
        subprocess.run(make, check=True, capture_output=True)
        plain, confident = configs(data, Path(tmp), latency=not args.no_latency)
        t_plain, _ = timed_run(plain, args.repeat)
        t_conf, result = timed_run(confident, args.repeat)
    goal = result.models["shapes_downscaled"].metrics["detection-map"]
    what = "without latency" if args.no_latency else "as shipped"
    print(
        f"configs/detection.json {what}, {args.images} images, 2 models, mAP goal at 95 % confidence (2,000 resamples)"
    )
    print(f"plain run      {t_plain:8.3f} s")
    print(f"confident run  {t_conf:8.3f} s")
    print(f"map: {goal.value:.4f} (candidate)")
    print(f"ratio confident / plain = {t_conf / t_plain:.2f}  (target <= 3)")


if __name__ == "__main__":
    main()

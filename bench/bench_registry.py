"""The first lookup of one built-in name in a fresh process, through the index (the registering module alone)
against the same lookup with the index off (every module of the registry's packages, the lookup before the
index): a metric, two data components, a model type, and the quickstart's whole config load.

    python bench/bench_registry.py [--runs 5]

Each measurement is its own process (imports are cached per process); what the case imports first is outside
the clock. Prints the medians and the ratio ours / reference.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

QUICKSTART = Path(__file__).resolve().parents[1] / "configs" / "quickstart.json"

#: label → (imported before the clock, timed)
CASES = {
    "metric accuracy_score": (
        "from olive_eval.metrics.base import metric_registry",
        "metric_registry.get('accuracy_score')",
    ),
    "dataset huggingface_dataset": (
        "from olive_eval.data.components import registries",
        "registries['dataset'].get('huggingface_dataset')",
    ),
    "post-process argmax": (
        "from olive_eval.data.components import registries",
        "registries['post-process'].get('argmax')",
    ),
    "model type ONNXModel": (
        "from olive_eval.runtimes.base import runtime_registry",
        "runtime_registry.get('ONNXModel')",
    ),
    "quickstart load_run_config": (
        "from olive_eval.config import load_run_config",
        f"load_run_config({str(QUICKSTART)!r})",
    ),
}

SCRIPT = """
import time
import olive_eval.registry
{setup}
if not {indexed}:
    olive_eval.registry.indexed_module = lambda kind, name: None
start = time.perf_counter()
{timed}
print(time.perf_counter() - start)
"""


def first_lookup(setup: str, timed: str, indexed: bool) -> float:
    code = SCRIPT.format(setup=setup, timed=timed, indexed=indexed)
    return float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    print(f"{'first lookup':30} {'indexed s':>10} {'whole s':>10} {'ratio':>7}")
    for label, (setup, timed) in CASES.items():
        ours, reference = [], []
        for _ in range(runs):  # alternate, so that a change of load touches both alike
            ours.append(first_lookup(setup, timed, indexed=True))
            reference.append(first_lookup(setup, timed, indexed=False))
        ours_s, reference_s = statistics.median(ours), statistics.median(reference)
        print(f"{label:30} {ours_s:10.4f} {reference_s:10.4f} {ours_s / reference_s:7.2f}")


if __name__ == "__main__":
    main()

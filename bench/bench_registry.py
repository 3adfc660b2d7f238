"""The first lookup of one built-in name in a fresh process: the indexed module alone against every module of
the registry's packages (the lookup before the index), for a metric, a data component and a model type.

    python bench/bench_registry.py [--runs 5]

Each measurement is its own process (imports are cached per process); the registry's owner module is imported
before the clock starts. Prints the medians and the ratio ours / reference.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

CASES = {
    "metric accuracy_score": ("olive_eval.metrics.base", "metric_registry", "accuracy_score"),
    "dataset huggingface_dataset": ("olive_eval.data.components", "registries['dataset']", "huggingface_dataset"),
    "post-process argmax": ("olive_eval.data.components", "registries['post-process']", "argmax"),
    "model type ONNXModel": ("olive_eval.runtimes.base", "runtime_registry", "ONNXModel"),
}

SCRIPT = """
import time
from {owner} import {head}
from olive_eval.registry import import_package
registry = {registry}
start = time.perf_counter()
if {whole}:
    for package in registry.packages:
        import_package(package)
registry.get({name!r})
print(time.perf_counter() - start)
"""


def first_lookup(owner: str, registry: str, name: str, whole: bool) -> float:
    code = SCRIPT.format(owner=owner, head=registry.split("[")[0], registry=registry, name=name, whole=whole)
    return float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    print(f"{'first lookup':30} {'indexed s':>10} {'whole s':>10} {'ratio':>7}")
    for label, (owner, registry, name) in CASES.items():
        ours, reference = [], []
        for _ in range(runs):  # alternate, so that a change of load touches both alike
            ours.append(first_lookup(owner, registry, name, whole=False))
            reference.append(first_lookup(owner, registry, name, whole=True))
        ours_s, reference_s = statistics.median(ours), statistics.median(reference)
        print(f"{label:30} {ours_s:10.4f} {reference_s:10.4f} {ours_s / reference_s:7.2f}")


if __name__ == "__main__":
    main()

"""Run an Olive workflow whose evaluator is olive-eval's, then print Olive's run history and olive-eval's
table side by side. ::

    python run.py                                    # workflow.json: the workflow's own Olive metrics
    python run.py workflow_olive_eval_config.json    # olive_eval.json's metrics, Olive ranking by two of them

Run it from this folder (Olive resolves a workflow's relative paths against the working directory). Exits 1
when Olive produced no output model (the log says why).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OLIVE_DISABLE_TELEMETRY", "1")  # before Olive is imported: nothing leaves this machine

from olive.workflows import run as olive_run

from olive_eval.records.results_load import read_results
from olive_eval.report.console import render


def olive_history(output_dir: Path) -> str:
    """Olive's footprint as a table: each model it evaluated, the pass that made it, the values it recorded."""
    footprint = json.loads((output_dir / "footprint.json").read_text())
    rows = []
    for model_id, node in footprint.items():
        values = (node.get("metrics") or {}).get("value")
        if values:
            cells = "  ".join(f"{key}={entry['value']:.6g}" for key, entry in values.items())
            rows.append(f"{model_id:<10} {node.get('from_pass') or 'input model':<22} {cells}")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    workflow_file = Path(argv[0] if argv else "workflow.json")
    workflow = json.loads(workflow_file.read_text())
    output = olive_run(str(workflow_file))
    evaluator = workflow["evaluators"][workflow["evaluator"]]
    print(f"Olive's run history ({workflow['output_dir']}/footprint.json):")
    print(olive_history(Path(workflow["output_dir"])))
    results = Path(evaluator["output_dir"]) / "results.json"
    print(f"\nolive-eval ({results}):")
    print(render(read_results(results)))
    return 0 if output.has_output_model() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

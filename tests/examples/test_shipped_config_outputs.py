"""Each shipped config writes into a folder of its own, so running one example never mixes into another's."""

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIGS = sorted(p for p in (REPO / "configs").glob("*.json") if p.name != "run.schema.json")


def test_every_shipped_config_names_its_own_output_dir():
    folders = {}
    for path in CONFIGS:
        config = json.loads(path.read_text())
        assert "output_dir" in config, f"{path.name} has no output_dir: its results would land in ./olive-eval-output"
        folders[path.name] = (path.parent / config["output_dir"]).resolve()
    assert len(set(folders.values())) == len(folders), f"two configs share an output folder: {folders}"
    assert all(folder.name == name.removesuffix(".json") for name, folder in folders.items())

"""The digits test set as Olive data components: the workflow's calibration data (and, for Olive's own
evaluator in bench/bench_olive_workflow.py, its evaluation data). Olive imports this file as the data
config's user_script."""

import json
from pathlib import Path

import numpy as np
from olive.data.registry import Registry


class DigitsDataset:
    """(inputs, label) pairs, the shape Olive's dataloaders and evaluators expect."""

    def __init__(self, data_files: str) -> None:
        rows = [json.loads(line) for line in Path(data_files).read_text().splitlines() if line]
        self.pixels = np.asarray([row["pixels"] for row in rows], dtype=np.float32)
        self.labels = np.asarray([row["label"] for row in rows], dtype=np.int64)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[dict[str, np.ndarray], np.int64]:
        return {"pixels": self.pixels[index]}, self.labels[index]


@Registry.register_dataset()
def digits_dataset(data_files: str, **kwargs) -> DigitsDataset:
    return DigitsDataset(data_files)


@Registry.register_post_process()
def digits_argmax(output, **kwargs):
    import torch

    return torch.as_tensor(output).argmax(-1)

"""Render the synthetic detection set: shapes on a noisy background, with their exact boxes.

Each 96x96 grayscale image holds 1 to 6 shapes (rectangles, disks, triangles) of 6 to 40 pixels, on a
background of mean 40 with Gaussian noise; about one shape in ten may touch another (the detector then
sees one blob). Boxes are ``[x1, y1, x2, y2]`` pixel edges (a shape filling columns 3..7 has x1=3, x2=8).

    python examples/detection/make_data.py            # writes examples/detection/data/shapes.jsonl

Deterministic (seed 0); nothing is downloaded. Labels: 1 rectangle, 2 disk, 3 triangle.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

SIZE = 96
LABELS = {1: "rectangle", 2: "disk", 3: "triangle"}
HERE = Path(__file__).resolve().parent


def shape_mask(kind: int, h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """A filled ``[h, w]`` mask whose bounding box is the whole array."""
    yy, xx = np.mgrid[0:h, 0:w]
    if kind == 1:
        return np.ones((h, w), bool)
    if kind == 2:
        cy, cx = (h - 1) / 2, (w - 1) / 2
        return ((yy - cy) / (h / 2)) ** 2 + ((xx - cx) / (w / 2)) ** 2 <= 1.0
    apex = rng.uniform(0.2, 0.8) * (w - 1)  # triangle: apex on the top edge, base on the bottom edge
    t = yy / max(h - 1, 1)
    mask = (xx >= apex * (1 - t) - 0.5) & (xx <= apex + (w - 1 - apex) * t + 0.5)
    mask[0, round(apex)] = True
    return mask


def render(rng: np.random.Generator) -> tuple[np.ndarray, list[list[int]], list[int]]:
    image = rng.normal(40, 8, (SIZE, SIZE))
    taken = np.zeros((SIZE, SIZE), bool)
    boxes, labels = [], []
    for _ in range(int(rng.integers(1, 7))):
        for _attempt in range(30):
            kind = int(rng.integers(1, 4))
            h, w = (int(v) for v in rng.integers(6, 41, 2))
            y, x = int(rng.integers(0, SIZE - h)), int(rng.integers(0, SIZE - w))
            region = taken[max(0, y - 2) : y + h + 2, max(0, x - 2) : x + w + 2]
            if region.any() and rng.random() > 0.1:
                continue
            mask = shape_mask(kind, h, w, rng)
            image[y : y + h, x : x + w][mask] = rng.uniform(150, 230) + rng.normal(0, 8, int(mask.sum()))
            taken[y : y + h, x : x + w] |= mask
            boxes.append([x, y, x + w, y + h])
            labels.append(kind)
            break
    return np.clip(image, 0, 255).astype(np.uint8), boxes, labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=300)
    parser.add_argument("--out", type=Path, default=HERE / "data" / "shapes.jsonl")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    n_objects = 0
    with args.out.open("w", encoding="utf-8") as handle:
        for i in range(args.images):
            image, boxes, labels = render(rng)
            n_objects += len(boxes)
            row = {"id": i, "pixels": image.tolist(), "objects": {"boxes": boxes, "labels": labels}}
            handle.write(json.dumps(row, separators=(",", ":")) + "\n")
    print(f"wrote {args.images} images, {n_objects} objects to {args.out}")


if __name__ == "__main__":
    main()

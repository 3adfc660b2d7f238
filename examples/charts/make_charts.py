"""Render the charts example: bar charts with known values, drawn with Pillow, and numeric questions about them.

Each chart has four to six bars with the category under each bar and the value printed above it. The printed
label is rounded (to a whole number on most charts, keeping one decimal on some), while the answer is the exact
value, so a reader that reads the label perfectly is still a little off: that is what ChartQA's relaxed accuracy
(5% tolerance) forgives and exact string matching does not. Every fourth chart is in percent ("42%").

Writes ``data/charts.parquet``: ``image`` (a Hugging Face image dict with the PNG bytes), ``question``
("What is the value of Apples?") and ``answer`` (the exact value as text). Seeded; ``--check`` compares the text
columns with the shipped file (the pixels depend on the FreeType build).

Run: ``python examples/charts/make_charts.py``.
"""

from __future__ import annotations

import argparse
import io
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw, ImageFont

DATA = Path(__file__).resolve().parent / "data"
N_CHARTS = 16
CATEGORIES = ["Apples", "Pears", "Plums", "Grapes", "Lemons", "Mangos", "Kiwis", "Figs", "Dates", "Limes"]
TITLES = ["Fruit sold (tonnes)", "Orders per region", "Stock by product", "Survey answers"]


def chart(rng: random.Random, index: int) -> tuple[bytes, list[tuple[str, str]]]:
    categories = rng.sample(CATEGORIES, rng.randint(4, 6))
    percent = index % 4 == 3
    values = [round(rng.uniform(5, 95 if percent else 400), 1) for _ in categories]
    decimals = 1 if index % 3 == 2 else 0
    suffix = "%" if percent else ""
    font = ImageFont.truetype("DejaVuSans.ttf", 16)
    width, height, base, top = 120 + 90 * len(categories), 360, 300, 60
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.text((20, 15), TITLES[index % len(TITLES)] + (" in %" if percent else ""), font=font, fill="black")
    draw.line((50, base, width - 30, base), fill="black", width=2)
    scale = (base - top - 30) / max(values)
    for i, (category, value) in enumerate(zip(categories, values, strict=True)):
        x = 70 + 90 * i
        bar_top = base - value * scale
        draw.rectangle((x, bar_top, x + 50, base), fill=(70, 120, 200))
        label = f"{value:.{decimals}f}{suffix}"
        draw.text((x + 25, bar_top - 6), label, font=font, fill="black", anchor="mb")
        draw.text((x + 25, base + 10), category, font=font, fill="black", anchor="mt")
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    asked = rng.sample(range(len(categories)), 2)
    return out.getvalue(), [(f"What is the value of {categories[k]}?", f"{values[k]}{suffix}") for k in asked]


def table(with_images: bool = True) -> pa.Table:
    rng = random.Random(7)
    columns: dict[str, list] = {"image": [], "question": [], "answer": []}
    for index in range(N_CHARTS):
        png, questions = chart(rng, index)
        for question, answer in questions:
            columns["image"].append({"bytes": png if with_images else None, "path": f"chart_{index:02d}.png"})
            columns["question"].append(question)
            columns["answer"].append(answer)
    return pa.table(columns)


def text_columns(t: pa.Table) -> dict[str, list]:
    return {"question": t.column("question").to_pylist(), "answer": t.column("answer").to_pylist()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the shipped file holds this text")
    args = parser.parse_args()
    path = DATA / "charts.parquet"
    if args.check:
        current = path.is_file() and text_columns(pq.read_table(path)) == text_columns(table(with_images=False))
        raise SystemExit(0 if current else f"stale: {path}; run make_charts.py")
    DATA.mkdir(parents=True, exist_ok=True)
    made = table()
    pq.write_table(made, path, compression="zstd")
    print(f"{made.num_rows} questions about {N_CHARTS} charts in {path}")


if __name__ == "__main__":
    main()

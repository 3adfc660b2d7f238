"""Render the OCR example's documents with Pillow: receipts, forms and short paragraphs, from text written here.

Writes two parquet files whose ``image`` column holds the PNG (grayscale, DejaVu Sans) as a Hugging Face image
dict ``{"bytes", "path"}``, so the data has no paths to resolve: ``data/pages.parquet`` (one row per document: the
image, the instruction "Read the document." and the ground-truth text) and ``data/questions.parquet`` (two or three
rows per document: a question and its acceptable answers, as a list). Seeded: the same text every time; the pixels
depend on the FreeType build, so the files are shipped and ``--check`` compares only their text columns.

Run: ``python examples/ocr/make_documents.py`` (about a second).
"""

from __future__ import annotations

import argparse
import io
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw, ImageFont

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
N_DOCUMENTS = 30
READ = "Read the document."

STORES = ["ACME GROCERY", "CORNER BAKERY", "RIVERSIDE PHARMACY", "NORTHWIND MARKET", "BLUE LAGOON CAFE"]
STREETS = ["Market Street", "Elm Avenue", "Harbour Road", "Station Lane", "Oak Boulevard"]
TOWNS = ["Springfield", "Riverton", "Lakeside", "Millbrook", "Fairview"]
ITEMS = ["Milk", "Bread", "Eggs", "Coffee", "Apples", "Butter", "Cheese", "Rice", "Tea", "Honey", "Soap", "Pasta"]
FIRST = ["Anna", "Peter", "Maria", "James", "Laura", "Omar", "Chen", "Sofia", "David", "Elena"]
LAST = ["Smith", "Novak", "Garcia", "Okafor", "Lindqvist", "Rossi", "Tanaka", "Müller", "Dubois", "Kowalski"]
TITLES = ["Annual Report", "Meeting Notes", "Safety Notice", "Product Update", "Library Hours", "Travel Policy"]
SENTENCES = [
    "The committee approved the budget for the next year.",
    "All visitors must sign in at the front desk.",
    "The new schedule starts on the first Monday of May.",
    "Please return borrowed books within three weeks.",
    "Expenses above fifty dollars need a written receipt.",
    "The east entrance is closed for repairs until June.",
    "Questions about the update can be sent to the help desk.",
    "Staff meetings now take place every second Thursday.",
    "Printed copies are available in the main office.",
    "The warehouse team shipped twelve hundred orders.",
]


def receipt(rng: random.Random) -> tuple[list[str], list[tuple[str, list[str]]]]:
    store = rng.choice(STORES)
    date = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    lines = [store, f"{rng.randint(1, 99)} {rng.choice(STREETS)}, {rng.choice(TOWNS)}", f"Date: {date}"]
    total = 0.0
    for item in rng.sample(ITEMS, rng.randint(3, 5)):
        price = rng.randint(50, 1500) / 100
        total += price
        lines.append(f"{item:<22}{price:>8.2f}")
    amount = f"{total:.2f}"
    lines.append(f"{'TOTAL':<20}${amount:>9}")
    questions = [("What is the total?", [f"${amount}", amount]), ("What is the date?", [date])]
    return lines, questions


def form(rng: random.Random) -> tuple[list[str], list[tuple[str, list[str]]]]:
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    fields = {
        "Name": name,
        "City": rng.choice(TOWNS),
        "Phone": f"555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
        "Account": f"AC{rng.randint(100000, 999999)}",
    }
    lines = ["REGISTRATION FORM", *(f"{key}: {value}" for key, value in fields.items())]
    asked = rng.sample(sorted(fields), 2)
    return lines, [(f"What is the {key.lower()}?", [fields[key]]) for key in asked]


def paragraph(rng: random.Random) -> tuple[list[str], list[tuple[str, list[str]]]]:
    title = rng.choice(TITLES)
    lines = [title, *rng.sample(SENTENCES, rng.randint(3, 4))]
    return lines, [("What is the title?", [title, title.upper()])]


def render(lines: list[str]) -> bytes:
    font = ImageFont.truetype("DejaVuSans.ttf", 18)
    image = Image.new("L", (640, 40 + 30 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((28, 20 + 30 * i), line, font=font, fill=0)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def documents() -> list[tuple[str, list[str], list[tuple[str, list[str]]]]]:
    rng = random.Random(2024)
    kinds = [receipt, form, paragraph]
    return [(f"doc_{i:02d}.png", *kinds[i % 3](rng)) for i in range(N_DOCUMENTS)]


def tables(with_images: bool = True) -> dict[str, pa.Table]:
    pages: dict[str, list] = {"image": [], "question": [], "answer": []}
    questions: dict[str, list] = {"image": [], "question": [], "answers": []}
    for name, lines, asked in documents():
        image = {"bytes": render(lines) if with_images else None, "path": name}
        pages["image"].append(image)
        pages["question"].append(READ)
        pages["answer"].append("\n".join(lines))
        for question, answers in asked:
            questions["image"].append(image)
            questions["question"].append(question)
            questions["answers"].append(answers)
    return {"pages": pa.table(pages), "questions": pa.table(questions)}


def text_columns(table: pa.Table) -> dict[str, list]:
    return {c: table.column(c).to_pylist() for c in table.column_names if c != "image"} | {
        "paths": [i["path"] for i in table.column("image").to_pylist()]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the shipped files hold this text")
    args = parser.parse_args()
    if args.check:
        stale = [
            name
            for name, table in tables(with_images=False).items()
            if not (DATA / f"{name}.parquet").is_file()
            or text_columns(pq.read_table(DATA / f"{name}.parquet")) != text_columns(table)
        ]
        raise SystemExit(f"stale: {', '.join(stale)}; run make_documents.py" if stale else 0)
    DATA.mkdir(parents=True, exist_ok=True)
    made = tables()
    for name, table in made.items():
        pq.write_table(table, DATA / f"{name}.parquet", compression="zstd")
    print(f"{made['pages'].num_rows} documents, {made['questions'].num_rows} questions in {DATA}")


if __name__ == "__main__":
    main()

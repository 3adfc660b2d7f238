"""Synthesize the speech example's test set with espeak-ng: a fixed list of English sentences, varied voices
and speeds, written as 16-bit WAV files plus ``clips.jsonl`` (``audio``: the file, relative to the jsonl;
``text``: the sentence; ``voice``, ``speed``).

Run: ``python examples/speech/make_clips.py`` (needs the ``espeak-ng`` program: ``apt-get install espeak-ng``).
The output is deterministic for a given espeak-ng version; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent

SENTENCES = [
    "the cat sat on the mat by the door",
    "please close the window before you go to bed",
    "my brother drives a red car to work every day",
    "we will meet at the station at nine in the morning",
    "the children played in the park after school",
    "she bought some bread and milk at the shop",
    "it is going to rain later this afternoon",
    "the train was late again on monday",
    "can you tell me the way to the library",
    "he reads a book before he goes to sleep",
    "the water in the lake is very cold today",
    "open the door and turn on the light",
    "the dog ran across the road to find its ball",
    "i would like a cup of tea with sugar",
    "our house has a small garden with green trees",
    "the doctor said that he needs more rest",
    "they are going to visit their friends next week",
    "the old man walked slowly down the street",
    "please send me the report by friday",
    "the sun is shining and the sky is blue",
    "we need to buy new shoes for the children",
    "the music was too loud for the small room",
    "turn left at the next corner and stop",
    "the price of food went up this year",
    "she called her mother on the phone last night",
    "the team won the game in the last minute",
    "put the books back on the shelf",
    "the meeting will start in ten minutes",
    "he likes to play the guitar in the evening",
    "there are many people waiting for the bus",
    "the flowers in the garden smell very nice",
    "do not forget to bring your coat",
    "the plane will land at the airport soon",
    "my sister works in a big hospital",
    "the birds are singing in the tall tree",
    "we had fish and rice for dinner",
]

#: (espeak-ng voice, words per minute): American and British voices with espeak-ng's Klatt-synthesizer variants
#: (closer to recorded speech than the default formant voice, so the recognizer has a chance), varied speeds.
VOICES = [
    ("en-us+klatt2", 160),
    ("en-us+klatt3", 150),
    ("en-us+klatt", 170),
    ("en-us+klatt6", 145),
    ("en-gb-x-rp+klatt", 155),
    ("en-us+klatt4", 180),
]


def synthesize(out_dir: Path, espeak: str) -> list[dict[str, object]]:
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, text in enumerate(SENTENCES):
        voice, speed = VOICES[i % len(VOICES)]
        name = f"clip_{i:02d}.wav"
        subprocess.run([espeak, "-v", voice, "-s", str(speed), "-w", str(out_dir / name), text], check=True)
        rows.append({"audio": f"{out_dir.name}/{name}", "text": text, "voice": voice, "speed": speed})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "data", help="folder for clips.jsonl and the WAV folder")
    args = parser.parse_args()
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise SystemExit("espeak-ng is not installed: apt-get install espeak-ng")
    rows = synthesize(args.out / "clips", espeak)
    with (args.out / "clips.jsonl").open("w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    print(f"wrote {len(rows)} clips and {args.out / 'clips.jsonl'}")


if __name__ == "__main__":
    main()

"""Proof that a change left behaviour alone: every shipped config's results.json, recorded before and after.

    python bench/compare_runs.py record OUT_DIR [--configs quickstart minilm ...] [--inputs-from CHECKOUT]
    python bench/compare_runs.py compare BEFORE_DIR AFTER_DIR [--rel-tol 1e-12]

``record`` runs each config in configs/ (or those named) with this checkout's code (``python -m olive_eval
--config C --no-cache --quiet``), one at a time, into ``OUT_DIR/<config>/``, keeping its results.json and the
console table; ``OUT_DIR/record.json`` holds each run's exit status and seconds and a digest of the generated
inputs it read. The inputs some configs need are built first, as .ci/run builds them (the MiniLM exports, the
trained tiny Llama, the speech clips, the detection images), skipping those already there; a few committed
inputs are checked by their generator's ``--check``. The tiny Llama trains for a fixed time, so it differs from
one build to the next: to compare two checkouts, record the second with ``--inputs-from`` the first (its
generated inputs are copied), and ``compare`` refuses records whose input digests differ.

``compare`` prints one line per config, ``same`` or its differences (results_diff.py says what is compared and
what, being measured time, is not), and exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from results_diff import compare_results

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Step:
    """A generator run before a config: ``folder`` holds what it writes (git-ignored), none for a check."""

    script: tuple[str, ...]
    folder: str | None = None
    outputs: tuple[str, ...] = ()

    def done(self, repo: Path) -> bool:
        return self.folder is not None and all((repo / self.folder / o).exists() for o in self.outputs)


MINILM = Step(
    ("examples/minilm/make_models.py", "--no-bench"),
    "examples/minilm/models",
    ("minilm_fp32.onnx", "minilm_int8.onnx", "tokenizer"),
)
LLM = Step(("examples/llm/build.py",), "examples/llm/models", ("hf", "genai_fp32", "genai_int4"))
#: config stem -> what it needs built or checked first (the order of .ci/run)
STEPS: dict[str, tuple[Step, ...]] = {
    "minilm": (MINILM,),
    "quantization_sweep": (MINILM,),
    "llm": (LLM,),
    "lm_eval": (LLM, Step(("examples/lm_eval/make_tasks.py", "--check"))),
    "speech": (Step(("examples/speech/make_clips.py",), "examples/speech/data", ("clips.jsonl",)),),
    "ocr": (Step(("examples/ocr/make_documents.py", "--check")),),
    "charts": (Step(("examples/charts/make_charts.py", "--check")),),
    "detection": (Step(("examples/detection/make_data.py",), "examples/detection/data", ("shapes.jsonl",)),),
}


def shipped_configs(repo: Path) -> list[str]:
    return sorted(p.stem for p in (repo / "configs").glob("*.json") if not p.name.endswith(".schema.json"))


def digest(folder: Path) -> str:
    """One sha256 over every file's relative path and bytes (a link: its target), in sorted order."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if (Path(root) / d).is_symlink()]):
            path = Path(root) / name
            if name == ".gitignore":
                continue
            h.update(str(path.relative_to(folder)).encode() + b"\0")
            if path.is_symlink():
                h.update(b"link:" + os.readlink(path).encode())
            else:
                with open(path, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        h.update(block)
    return h.hexdigest()


def run_python(args: list[str], log: Path | None = None) -> tuple[int, float, str]:
    """A Python command in the checkout's root with its own code first on the path: status, seconds, stdout."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True)
    seconds = round(time.perf_counter() - start, 1)
    if log is not None:
        log.write_text(proc.stdout + ("\n--- stderr ---\n" + proc.stderr if proc.stderr else ""))
    return proc.returncode, seconds, proc.stdout if proc.returncode == 0 else proc.stderr[-2000:]


def prepare(stem: str, inputs_from: Path | None, built: dict[Step, str]) -> tuple[str | None, dict[str, str]]:
    """Build or check what ``stem`` needs: an error (None when ready) and the digests of its generated inputs."""
    digests = {}
    for step in STEPS.get(stem, ()):
        if step not in built:
            if inputs_from is not None and step.folder is not None and not step.done(REPO):
                shutil.copytree(inputs_from / step.folder, REPO / step.folder, symlinks=True, dirs_exist_ok=True)
            if step.done(REPO):
                built[step] = "present"
            else:
                rc, seconds, out = run_python(list(step.script))
                print(f"  {' '.join(step.script)}: exit {rc} in {seconds} s", flush=True)
                built[step] = "ok" if rc == 0 else f"{' '.join(step.script)} failed: {out.strip()[-300:]}"
        if built[step] not in ("ok", "present"):
            return built[step], digests
        if step.folder is not None:
            digests[step.folder] = digest(REPO / step.folder)
    return None, digests


def record(out_dir: Path, stems: list[str], inputs_from: Path | None) -> int:
    """Run each config into ``out_dir/<stem>/``; the summary goes to ``out_dir/record.json``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    summary_path = out_dir / "record.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    summary.setdefault("configs", {})
    summary["checkout"], summary["olive_eval_tree"], summary["repo"] = git("HEAD"), git("HEAD:olive_eval"), str(REPO)
    summary["olive_eval_changed"] = bool(git_status("olive_eval"))
    built: dict[Step, str] = {}
    failures = 0
    for stem in stems:
        print(f"{stem}:", flush=True)
        error, digests = prepare(stem, inputs_from, built)
        entry: dict[str, object] = {"inputs": digests}
        folder = out_dir / stem
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        if error is not None:
            entry.update(status="not run", reason=error)
        else:
            run_dir = folder / "run"
            args = ["-m", "olive_eval", "--config", f"configs/{stem}.json", "--no-cache", "--quiet"]
            rc, seconds, _ = run_python([*args, "--output-dir", str(run_dir)], folder / "console.txt")
            entry.update(status="ran", exit_code=rc, seconds=seconds)
            if (run_dir / "results.json").exists():
                shutil.copy2(run_dir / "results.json", folder / "results.json")
            else:
                entry.update(status="no results.json")
            shutil.rmtree(run_dir, ignore_errors=True)
        failures += entry["status"] != "ran"
        summary["configs"][stem] = entry
        summary_path.write_text(json.dumps(summary, indent=1) + "\n")
        print(f"  {entry['status']}" + (f", exit {rc} in {seconds} s" if entry["status"] == "ran" else ""), flush=True)
    return 1 if failures else 0


def git(revision: str) -> str | None:
    """The checkout's commit, or a folder's tree in it: what the record ran, beside uncommitted changes."""
    proc = subprocess.run(["git", "rev-parse", revision], cwd=REPO, capture_output=True, text=True)
    return proc.stdout.strip() or None


def git_status(folder: str) -> str:
    proc = subprocess.run(["git", "status", "--porcelain", folder], cwd=REPO, capture_output=True, text=True)
    return proc.stdout.strip()


def compare(before: Path, after: Path, rel_tol: float) -> int:
    """One line per config; 1 when any differs, is missing from one side, or read other inputs."""
    records = [json.loads(p.read_text()) if p.exists() else {} for p in (before / "record.json", after / "record.json")]
    info = [r.get("configs", {}) for r in records]
    repos = (records[0].get("repo"), records[1].get("repo"))
    stems = sorted(
        {p.parent.name for d in (before, after) for p in d.glob("*/results.json")} | set(info[0]) | set(info[1])
    )
    different = 0
    for stem in stems:
        lines = compare_config(before / stem, after / stem, *(i.get(stem, {}) for i in info), rel_tol, repos)
        different += lines[0] != "same"
        print(f"{stem}: {'; '.join(lines)}")
    print(f"{len(stems) - different} of {len(stems)} configs the same")
    return 1 if different else 0


#: A user script's module name ends with a digest of the script's absolute path (olive_eval/user_module.py).
USER_MODULE = re.compile(r"(olive_eval_user_\w+?)_[0-9a-f]{8}\b")


def anonymous(value: Any, roots: list[str | None]) -> Any:
    """``value`` with each of ``roots`` (the run's output folder, the checkout) in its strings put as ``<root>``,
    and user modules' path digests as ``<path>``: where the checkout lies is not behaviour."""
    if isinstance(value, dict):
        return {k: anonymous(v, roots) for k, v in value.items()}
    if isinstance(value, list):
        return [anonymous(v, roots) for v in value]
    if isinstance(value, str):
        for root in roots:
            if root:
                value = value.replace(root, "<root>")
        value = USER_MODULE.sub(r"\1_<path>", value)
    return value


def compare_config(
    before: Path, after: Path, info_a: dict, info_b: dict, rel_tol: float, repos: tuple[str | None, str | None]
) -> list[str]:
    """``["same", notes...]``, or the differences (the first never ``same``); paths under each run's output
    folder and checkout are compared relative to them, so two checkouts in different folders compare."""
    files = [d / "results.json" for d in (before, after)]
    missing = [f"no results.json {side}" for side, f in zip(("before", "after"), files, strict=True) if not f.exists()]
    if missing:
        reasons = [i.get("reason") for i in (info_a, info_b) if i.get("reason")]
        return [*missing, *reasons]
    inputs_a, inputs_b = info_a.get("inputs", {}), info_b.get("inputs", {})
    if inputs_a != inputs_b:
        return [
            f"generated inputs differ ({', '.join(sorted(set(inputs_a) | set(inputs_b)))}): record with --inputs-from"
        ]
    docs = [json.loads(f.read_text()) for f in files]
    docs = [anonymous(doc, [doc.get("output_dir"), repo]) for doc, repo in zip(docs, repos, strict=True)]
    diff = compare_results(*docs, rel_tol=rel_tol)
    exits = info_a.get("exit_code"), info_b.get("exit_code")
    if exits[0] != exits[1]:
        diff.differences.insert(0, f"exit code {exits[0]} -> {exits[1]}")
    if diff.differences:
        return diff.differences
    return ["same", *diff.notes]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="run every shipped config, keep each results.json")
    rec.add_argument("out_dir", type=Path)
    rec.add_argument("--configs", nargs="+", metavar="NAME", help="config stems (default: every one in configs/)")
    rec.add_argument("--inputs-from", type=Path, help="a checkout whose generated example inputs to copy first")
    cmp = commands.add_parser("compare", help="compare two records; exit 1 on any difference")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    cmp.add_argument("--rel-tol", type=float, default=0.0, help="let floats differ this much, each one named")
    args = parser.parse_args(argv)
    if args.command == "record":
        known = shipped_configs(REPO)
        unknown = sorted(set(args.configs or []) - set(known))
        if unknown:
            parser.error(f"not in configs/: {', '.join(unknown)} (known: {', '.join(known)})")
        return record(args.out_dir.resolve(), args.configs or known, args.inputs_from)
    return compare(args.before, args.after, args.rel_tol)


if __name__ == "__main__":
    sys.exit(main())

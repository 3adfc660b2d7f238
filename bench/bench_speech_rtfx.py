"""RTFx bookkeeping: the inference seconds a prediction pass records against the wall time of the timed region.

The example's pocketsphinx recognizer (``examples/speech/transcriber.py``) runs as a ``PythonModel`` over the
espeak-ng clips (``examples/speech/make_clips.py`` must have run). A wrapper around its ``predict`` measures the
wall time of every call from inside (``perf_counter`` at entry and exit): the region the pass times is that call
plus the post-processing, so ``inside / recorded`` must lie just under 1 (target 0.98 to 1.00). The run uses
``warmup_batches: 0`` so that every recorded second is counted.

Run: ``python bench/bench_speech_rtfx.py`` (about 15 s on 2 cores).
"""

from __future__ import annotations

import tempfile
import textwrap
from pathlib import Path

from olive_eval import evaluate

ROOT = Path(__file__).resolve().parents[1]

WRAPPER = textwrap.dedent(
    """
    import importlib.util, json, time

    spec = importlib.util.spec_from_file_location("speech_transcriber", {transcriber!r})
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


    class Timed:
        def __init__(self, inner, log):
            self.inner, self.log = inner, log

        def predict(self, batch):
            start = time.perf_counter()
            out = self.inner.predict(batch)
            seconds = time.perf_counter() - start
            with open(self.log, "a") as handle:
                handle.write(json.dumps(seconds) + "\\n")
            return out


    def load(model_path):
        return Timed(module.load_transcriber("default"), model_path)
    """
)


def main() -> None:
    data_file = ROOT / "examples" / "speech" / "data" / "clips.jsonl"
    if not data_file.is_file():
        raise SystemExit("run python examples/speech/make_clips.py first")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        script, log = folder / "timed.py", folder / "calls.jsonl"
        script.write_text(WRAPPER.format(transcriber=str(ROOT / "examples" / "speech" / "transcriber.py")))
        result = evaluate(
            {
                "input_model": {
                    "type": "PythonModel",
                    "name": "sphinx",
                    "user_script": str(script),
                    "model_loader": "load",
                    "model_path": str(log),
                },
                "data_configs": [
                    {
                        "name": "clips",
                        "load_dataset_config": {"data_name": "json", "data_files": str(data_file)},
                        "pre_process_data_config": {"type": "speech_transcription_pre_process"},
                        "post_process_data_config": {"type": "identity"},
                        "dataloader_config": {"batch_size": 4},
                    }
                ],
                "metrics": [
                    {
                        "name": "speech",
                        "type": "accuracy",
                        "data_config": "clips",
                        "sub_types": [
                            {"name": "wer", "priority": 1},
                            {"name": "rtfx", "metric_config": {"warmup_batches": 0}},
                        ],
                    }
                ],
                "output_dir": str(folder / "out"),
            }
        )
        model = result.models["sphinx"]
        assert model.status == "ok", model.error
        inside = sum(float(line) for line in log.read_text().splitlines())
        rtfx = model.metrics["speech-rtfx"]
        recorded = rtfx.details["inference_seconds"]
        print(f"batches: {model.passes['clips']['batches']}, audio: {rtfx.details['audio_seconds']:.3f} s")
        print(f"wall time inside the model calls: {inside:.6f} s")
        print(f"recorded inference seconds:       {recorded:.6f} s")
        print(f"ratio inside / recorded: {inside / recorded:.4f} (target 0.98 to 1.00)")
        print(f"rtfx {rtfx.value:.4f}, wer {model.metrics['speech-wer'].value:.4f}")


if __name__ == "__main__":
    main()

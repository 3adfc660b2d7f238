"""GenAIModel: an ONNX Runtime GenAI export of a tiny Llama (built here, offline) generates what onnxruntime-genai's
own generator gives, feeds the text metrics through the decode post-process, and rejects bad input in one line."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime_genai as og
import pytest

from olive_eval import evaluate
from olive_eval.data.batch import Batch
from olive_eval.errors import ConfigError
from olive_eval.records.parquet import read_records
from olive_eval.runtimes.base import create_runtime
from olive_eval.runtimes.genai_config import GenAIModelConfig
from tests.runtimes import llm_models
from tests.shared_builds import tiny_llama


@pytest.fixture(scope="module")
def llm(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny Llama (``hf``) and its fp32 and int4 GenAI exports, built once per run (read-only)."""
    return tiny_llama(tmp_path_factory)


PROMPTS = llm_models.sentences(7, seed=5)
GREEDY = {"max_new_tokens": 6, "do_sample": False}


def direct_ids(folder: Path, prompts: list[str], new_tokens: int = 6) -> list[list[int]]:
    """onnxruntime-genai's own greedy generation, one prompt at a time: the new tokens before end-of-sequence."""
    config = og.Config(str(folder))
    config.clear_providers()
    model = og.Model(config)
    tokenizer = og.Tokenizer(model)
    eos = json.loads((folder / "genai_config.json").read_text())["model"]["eos_token_id"]
    out = []
    for prompt in prompts:
        ids = tokenizer.encode(prompt)
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=len(ids) + new_tokens, do_sample=False)
        generator = og.Generator(model, params)
        generator.append_tokens(ids[None].astype(np.int32))
        while not generator.is_done():
            generator.generate_next_token()
        new = [int(t) for t in generator.get_sequence(0)[len(ids) :]]
        out.append(new[: new.index(eos)] if eos in new else new)
    return out


def direct(folder: Path, prompts: list[str], new_tokens: int = 6) -> list[str]:
    """:func:`direct_ids` decoded by onnxruntime-genai's own tokenizer."""
    tokenizer = og.Tokenizer(og.Model(str(folder)))
    return [
        tokenizer.decode(np.asarray(new, dtype=np.int32)).strip() for new in direct_ids(folder, prompts, new_tokens)
    ]


def genai_model(folder: Path, name: str = "genai", **extra: Any) -> dict[str, Any]:
    return {"type": "GenAIModel", "name": name, "model_path": str(folder), "generation_kwargs": GREEDY, **extra}


def config(tmp_path: Path, models: list[dict[str, Any]], references: list[str], prompts=PROMPTS, batch_size=3):
    return {
        "input_model": models[0],
        "candidates": models[1:],
        "data_configs": [llm_models.prompts_data_config(tmp_path / "prompts.jsonl", prompts, references, batch_size)],
        "metrics": [{"name": "gen", "type": "accuracy", "data_config": "gen", "sub_types": [{"name": "exact_match"}]}],
        "output_dir": str(tmp_path / "out"),
    }


def predictions(tmp_path: Path, model: str) -> list[str]:
    records = read_records(tmp_path / "out" / "instances" / model / "gen.parquet")
    return [r["prediction"] for r in sorted(records, key=lambda r: r["index"])]


@pytest.mark.parametrize("precision", ["fp32", "int4"])
def test_genai_generates_what_its_own_generator_gives(tmp_path, llm, precision):
    expected = direct(llm[precision], PROMPTS)
    assert len(set(expected)) > 3
    references = [e if i % 3 else "no such answer" for i, e in enumerate(expected)]
    result = evaluate(config(tmp_path, [genai_model(llm[precision])], references))
    assert result.models["genai"].status == "ok", result.models["genai"].error
    assert predictions(tmp_path, "genai") == expected
    value = result.models["genai"].metrics["gen-exact_match"].value
    assert value == pytest.approx(np.mean([e == r for e, r in zip(expected, references, strict=True)]))
    assert result.models["genai"].runtimes[0]["runtime"] == "onnxruntime-genai"


def test_hf_and_genai_fp32_give_the_same_greedy_text(tmp_path, llm):
    hf = {"type": "HfModel", "name": "hf", "model_path": str(llm["hf"]), "task": "text-generation"}
    hf["generation_kwargs"] = GREEDY
    result = evaluate(config(tmp_path, [hf, genai_model(llm["fp32"])], ["x"] * len(PROMPTS)))
    assert {m.status for m in result.models.values()} == {"ok"}
    assert predictions(tmp_path, "hf") == predictions(tmp_path, "genai") == direct(llm["fp32"], PROMPTS)


@pytest.mark.parametrize("new_tokens", [2, 5])
def test_max_new_tokens_sets_the_tokens_generated(llm, new_tokens):
    generation = {"max_new_tokens": new_tokens, "min_new_tokens": new_tokens}
    model = GenAIModelConfig(type="GenAIModel", model_path=llm["fp32"], generation_kwargs=generation)
    runtime = create_runtime(model, "cpu", [])
    ids = np.array([[5, 6, 7, 8], [2, 2, 9, 10]])
    out = runtime.predict(Batch({"input_ids": ids, "attention_mask": (ids != 2).astype(int)}, ["input_ids"]))
    assert out["sequences"].shape == (2, new_tokens)
    assert out["prompt_length"].tolist() == [0, 0]


def test_a_repeats_seed_column_seeds_the_sampling(llm):
    """A pass of repeats puts each repeat's seed in the batch: the same seed samples the same tokens."""
    generation = {"max_new_tokens": 12, "do_sample": True, "temperature": 2.0, "top_k": 0}
    model = GenAIModelConfig(type="GenAIModel", model_path=llm["fp32"], generation_kwargs=generation)
    runtime = create_runtime(model, "cpu", [])
    ids = np.array([[5, 6, 7, 8]])

    def sampled(seed: int) -> list[int]:
        batch = Batch({"input_ids": ids, "repeat_seed": np.array([seed])}, ["input_ids"])
        return runtime.predict(batch)["sequences"][0].tolist()

    assert sampled(3) == sampled(3)
    assert len({tuple(sampled(seed)) for seed in range(4)}) > 1


def test_a_folder_without_genai_config_is_a_config_error(tmp_path, llm):
    folder = tmp_path / "not_genai"
    shutil.copytree(llm["hf"], folder)
    with pytest.raises(ConfigError) as caught:
        evaluate(config(tmp_path, [genai_model(folder)], ["x"] * len(PROMPTS)))
    assert str(caught.value) == (
        f"<config>: input_model.model_path: {folder} has no genai_config.json: it is not an ONNX Runtime GenAI model "
        "folder (build one with python -m onnxruntime_genai.models.builder)"
    )


def test_max_new_tokens_of_zero_is_a_config_error(tmp_path, llm):
    model = genai_model(llm["fp32"], generation_kwargs={"max_new_tokens": 0})
    with pytest.raises(ConfigError) as caught:
        evaluate(config(tmp_path, [model], ["x"] * len(PROMPTS)))
    assert "input_model.generation_kwargs.max_new_tokens" in str(caught.value)
    assert "greater than or equal to 1" in str(caught.value)


def test_without_the_extra_the_error_names_it(tmp_path, llm, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime_genai", None)
    with pytest.raises(ConfigError) as caught:
        evaluate(config(tmp_path, [genai_model(llm["fp32"])], ["x"] * len(PROMPTS)))
    assert str(caught.value) == (
        "<config>: input_model.type: GenAIModel needs the 'onnxruntime-genai' package; install it with: "
        "pip install 'olive-eval[genai]'"
    )


def test_a_prompt_longer_than_the_context_fails_the_model(tmp_path, llm):
    long = " ".join(["the cat sits on the mat"] * 40)
    result = evaluate(config(tmp_path, [genai_model(llm["fp32"])], ["x", "x"], prompts=[PROMPTS[0], long]))
    model = result.models["genai"]
    assert model.status == "failed"
    assert "example 1: its prompt has" in model.error
    assert "has a context of 128 (genai_config.json model.context_length)" in model.error


def test_a_provider_this_build_lacks_fails_the_model_naming_what_it_has(tmp_path, llm):
    model = genai_model(llm["fp32"], execution_provider="CUDAExecutionProvider")
    result = evaluate(config(tmp_path, [model], ["x"] * len(PROMPTS)))
    has = ["CPUExecutionProvider"] + [
        name
        for name, check in [
            ("OpenVINO", og.is_openvino_available),
            ("QNN", og.is_qnn_available),
            ("WebGpu", og.is_webgpu_available),
        ]
        if check()
    ]
    assert result.models["genai"].status == "failed"
    assert result.models["genai"].error == (
        "execution provider 'CUDAExecutionProvider' is not available in this onnxruntime-genai build; "
        f"available: {', '.join(n if n.endswith('Provider') else n + 'ExecutionProvider' for n in has)}"
    )


def test_a_folder_built_for_a_missing_provider_fails_the_model(tmp_path, llm):
    folder = tmp_path / "cuda_built"
    shutil.copytree(llm["fp32"], folder)
    spec = json.loads((folder / "genai_config.json").read_text())
    spec["model"]["decoder"]["session_options"]["provider_options"] = [{"cuda": {}}]
    (folder / "genai_config.json").write_text(json.dumps(spec))
    result = evaluate(config(tmp_path, [genai_model(folder)], ["x"] * len(PROMPTS)))
    assert result.models["genai"].status == "failed"
    assert "was built for the 'cuda' provider" in result.models["genai"].error


def test_a_generation_of_no_tokens_is_an_empty_prediction_counted(tmp_path, llm):
    """The first token the model picks for the first prompt is made its end-of-sequence: that generation is empty."""
    first = direct_ids(llm["fp32"], PROMPTS[:1], new_tokens=1)[0][0]
    folder = tmp_path / "early_eos"
    shutil.copytree(llm["fp32"], folder)
    spec = json.loads((folder / "genai_config.json").read_text())
    spec["model"]["eos_token_id"] = first
    (folder / "genai_config.json").write_text(json.dumps(spec))
    result = evaluate(config(tmp_path, [genai_model(folder)], ["", *PROMPTS[1:3]], prompts=PROMPTS[:3]))
    model = result.models["genai"]
    assert model.status == "ok", model.error
    texts = predictions(tmp_path, "genai")
    assert texts[0] == ""
    assert model.passes["gen"]["notes"] == {
        "generations that decoded to empty text (scored as empty predictions)": sum(t == "" for t in texts)
    }
    assert model.metrics["gen-exact_match"].value == pytest.approx(1 / 3)


def test_an_onnx_model_on_a_genai_folder_points_to_genai_model(tmp_path, llm):
    model = {"type": "ONNXModel", "name": "onnx", "model_path": str(llm["fp32"])}
    with pytest.raises(ConfigError) as caught:
        evaluate(config(tmp_path, [model], ["x"] * len(PROMPTS)))
    assert str(caught.value) == (
        f"<config>: input_model.type: {llm['fp32']} holds genai_config.json: an ONNX Runtime GenAI model, which "
        'generates token by token; use "type": "GenAIModel" (or name its .onnx file to run the graph alone)'
    )


def test_sampling_without_top_k_keeps_transformers_50_or_the_whole_smaller_vocabulary(llm):
    from olive_eval.runtimes.genai_config import search_options

    sampling = GenAIModelConfig(
        type="GenAIModel", model_path=llm["fp32"], generation_kwargs={"do_sample": True, "max_new_tokens": 4}
    )
    assert search_options(sampling, 3, 128, vocab=14)["top_k"] == 14  # GenAI refuses a top_k above the vocabulary
    assert search_options(sampling, 3, 128, vocab=300)["top_k"] == 50
    chosen = sampling.model_copy(
        update={"generation_kwargs": sampling.generation_kwargs.model_copy(update={"top_k": 5})}
    )
    assert search_options(chosen, 3, 128, vocab=14)["top_k"] == 5
    greedy = GenAIModelConfig(type="GenAIModel", model_path=llm["fp32"], generation_kwargs={"max_new_tokens": 4})
    assert "top_k" not in search_options(greedy, 3, 128, vocab=14)


def cli_config(tmp_path: Path, model: dict[str, Any]) -> Path:
    """A run config file of ``model`` over a few prompts, for the CLI."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config(tmp_path, [model], ["x"] * len(PROMPTS))))
    return path


def test_a_malformed_genai_config_is_a_config_error_naming_the_file_and_where(tmp_path, capsys):
    from olive_eval.cli import main

    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "genai_config.json").write_text('{\n  "model": {\n    "type": "llama",,\n  }\n}\n')
    path = cli_config(tmp_path, genai_model(folder))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"olive-eval: config error: {path}: input_model.model_path: {folder / 'genai_config.json'} is not valid "
        "JSON: Expecting property name enclosed in double quotes at line 3, column 21"
    )


def test_a_genai_config_without_a_model_object_is_a_config_error(tmp_path):
    folder = tmp_path / "no_model"
    folder.mkdir()
    (folder / "genai_config.json").write_text('{"search": {}}')
    with pytest.raises(ConfigError) as caught:
        evaluate(config(tmp_path, [genai_model(folder)], ["x"] * len(PROMPTS)))
    assert str(caught.value) == (
        f'<config>: input_model.model_path: {folder / "genai_config.json"} has no "model" object: it is not an '
        "ONNX Runtime GenAI config"
    )

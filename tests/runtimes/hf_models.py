"""Tiny random-weight transformers models, built from a config inside the tests (nothing is downloaded).

Each builder saves a local folder (model + tokenizer or processor) and is deterministic: the weights come
from ``torch.manual_seed(seed)``, the vocabularies are written here. Sizes are tiny (hidden size 16-32,
2 layers) so a forward pass costs milliseconds on a CPU.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

#: The word vocabulary of the text models (lowercase words; the pre-tokenizer splits on whitespace).
WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "bird",
    "fish",
    "runs",
    "sits",
    "eats",
    "sleeps",
    "jumps",
    "on",
    "under",
    "over",
    "mat",
    "tree",
    "water",
    "fast",
    "slow",
    "big",
    "small",
    "red",
    "blue",
    "green",
    "happy",
    "sad",
    "and",
    "but",
    "very",
    "not",
]
#: Characters of the CTC vocabulary ("|" separates words, as in wav2vec2's tokenizer).
CHARS = list("abcdefghijklmnopqrstuvwxyz'")


def _seeded(seed: int) -> None:
    """transformers initializes new weights from torch's global generator."""
    torch.manual_seed(seed)


def sentences(n: int, seed: int, *, min_words: int = 2, max_words: int = 9) -> list[str]:
    """``n`` random sentences of the vocabulary's words, of different lengths (so batches need padding)."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(min_words, max_words + 1)))) for _ in range(n)]


# ---------------------------------------------------------------------------------------------- tokenizers
def word_tokenizer(kind: str = "bert") -> Any:
    """A word-level ``PreTrainedTokenizerFast`` made with the ``tokenizers`` library.

    ``bert``: special tokens [PAD] [UNK] [CLS] [SEP], with a post-processor that adds [CLS] ... [SEP]
    (and token type ids for pairs). ``gpt2``: <pad> <unk> <eos>, no post-processor (a causal LM's prompt
    gets no special tokens), the eos token as generation's stop.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] if kind == "bert" else ["<pad>", "<unk>", "<eos>"]
    vocab = {token: i for i, token in enumerate([*specials, *WORDS])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token=specials[1]))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if kind == "bert":
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
        )
        return PreTrainedTokenizerFast(
            tokenizer_object=tok,
            unk_token="[UNK]",
            pad_token="[PAD]",
            cls_token="[CLS]",
            sep_token="[SEP]",
            model_max_length=64,
            model_input_names=["input_ids", "token_type_ids", "attention_mask"],
        )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>", model_max_length=64
    )


# ---------------------------------------------------------------------------------------------- text
def build_bert(
    folder: Path, seed: int = 0, *, num_labels: int = 3, with_tokenizer: bool = True, hidden_size: int = 32
) -> Path:
    """A 2-layer BERT for sequence classification (``num_labels``) with its word-level tokenizer (``hidden_size``
    32: 90 KB of weights; a memory test asks for more, so the weights stand well above the process's noise)."""
    from transformers import BertConfig, BertForSequenceClassification

    _seeded(seed)
    tokenizer = word_tokenizer("bert")
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=2 * hidden_size,
        max_position_embeddings=64,
        num_labels=num_labels,
        pad_token_id=tokenizer.pad_token_id,
        initializer_range=0.5,  # the default 0.02 gives every sentence the same class
    )
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(folder)
    if with_tokenizer:
        tokenizer.save_pretrained(folder)
    return folder


class _LogitsOnly(torch.nn.Module):
    """The classifier returning its logits tensor (what the ONNX graph's one output is)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits


def export_bert_onnx(bert_folder: Path, onnx_file: Path) -> Path:
    """The BERT of ``bert_folder`` as ONNX (TorchScript exporter): inputs input_ids, attention_mask,
    token_type_ids with dynamic batch and sequence; output logits."""
    from transformers import BertForSequenceClassification

    model = BertForSequenceClassification.from_pretrained(bert_folder, attn_implementation="eager").eval()
    ids = torch.tensor([[2, 5, 6, 7, 3], [2, 8, 3, 0, 0]], dtype=torch.int64)
    mask = (ids != 0).to(torch.int64)
    dynamic = {0: "batch", 1: "sequence"}
    onnx_file.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation and tracer notes
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _LogitsOnly(model),
            (ids, mask, torch.zeros_like(ids)),
            str(onnx_file),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["logits"],
            dynamic_axes={
                "input_ids": dynamic,
                "attention_mask": dynamic,
                "token_type_ids": dynamic,
                "logits": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
    return onnx_file


def build_gpt2(folder: Path, seed: int = 0) -> Path:
    """A 2-layer GPT-2 (causal LM) with a word-level tokenizer (pad token set; eos ends generation)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    _seeded(seed)
    tokenizer = word_tokenizer("gpt2")
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=64,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = GPT2LMHeadModel(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# ---------------------------------------------------------------------------------------------- vision
IMAGE_SIZE = 32


def build_vit(folder: Path, seed: int = 0, *, num_labels: int = 3) -> Path:
    """A 2-layer ViT for image classification on 32x32 images, with its ``ViTImageProcessor``."""
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    _seeded(seed)
    config = ViTConfig(
        image_size=IMAGE_SIZE,
        patch_size=8,
        num_channels=3,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=num_labels,
        initializer_range=0.5,  # the default 0.02 gives every image the same class
    )
    ViTForImageClassification(config).eval().save_pretrained(folder)
    ViTImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}).save_pretrained(folder)
    return folder


# ---------------------------------------------------------------------------------------------- speech
SAMPLE_RATE = 16000
#: Whisper's feature extractor pads every clip to ``chunk_length`` seconds; the encoder's positions follow.
WHISPER_SECONDS = 1
WHISPER_MELS = 16


def _whisper_tokenizer(folder: Path) -> Any:
    """A byte-level BPE ``WhisperTokenizer`` from a tiny vocabulary written here: the printable ASCII bytes
    (as GPT-2's byte-to-unicode table spells them), a few merges, and Whisper's special tokens."""
    from transformers import WhisperTokenizer

    letters = [chr(c) for c in range(33, 127)] + ["Ġ"]  # "Ġ" is the byte of a space in GPT-2's byte table
    merges = ["t h", "th e", "Ġ th", "Ġth e", "a n", "i n"]
    tokens = [*letters, *(m.replace(" ", "") for m in merges)]
    vocab = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    specials = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
    tokenizer = WhisperTokenizer(
        str(folder / "vocab.json"),
        str(folder / "merges.txt"),
        unk_token="<|endoftext|>",
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=specials[1:],
    )
    return tokenizer


def build_whisper(folder: Path, seed: int = 0) -> Path:
    """A 2+2-layer Whisper (``WhisperForConditionalGeneration``) on 1-second clips, with a processor
    (``WhisperFeatureExtractor`` with 16 mel bins + the tiny tokenizer above)."""
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration, WhisperProcessor

    _seeded(seed)
    with tempfile.TemporaryDirectory() as scratch:
        tokenizer = _whisper_tokenizer(Path(scratch))
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in tokenizer.all_special_tokens}
    frames = WHISPER_SECONDS * SAMPLE_RATE // 160
    extractor = WhisperFeatureExtractor(
        feature_size=WHISPER_MELS, sampling_rate=SAMPLE_RATE, hop_length=160, chunk_length=WHISPER_SECONDS, n_fft=400
    )
    config = WhisperConfig(
        vocab_size=len(tokenizer),
        num_mel_bins=WHISPER_MELS,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_source_positions=frames // 2,
        max_target_positions=32,
        pad_token_id=ids["<|endoftext|>"],
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|endoftext|>"],
        decoder_start_token_id=ids["<|startoftranscript|>"],
        init_std=0.2,  # the default 0.02 leaves a 2-layer decoder deaf to the audio: every clip, one transcript
    )
    model = WhisperForConditionalGeneration(config).eval()
    generation = model.generation_config
    generation.decoder_start_token_id = ids["<|startoftranscript|>"]
    generation.eos_token_id = ids["<|endoftext|>"]
    generation.pad_token_id = ids["<|endoftext|>"]
    generation.no_timestamps_token_id = ids["<|notimestamps|>"]
    generation.forced_decoder_ids = None
    generation.suppress_tokens = []
    generation.begin_suppress_tokens = []
    model.save_pretrained(folder)
    WhisperProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def build_wav2vec2(folder: Path, seed: int = 0) -> Path:
    """A 2-layer ``Wav2Vec2ForCTC`` with a ``Wav2Vec2Processor`` (a CTC tokenizer over letters)."""
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
        Wav2Vec2Processor,
    )

    _seeded(seed)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = {token: i for i, token in enumerate(["<pad>", "<unk>", "|", *CHARS])}
    (folder / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = Wav2Vec2CTCTokenizer(
        str(folder / "vocab.json"), unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|"
    )
    extractor = Wav2Vec2FeatureExtractor(
        feature_size=1, sampling_rate=SAMPLE_RATE, padding_value=0.0, do_normalize=True, return_attention_mask=True
    )
    config = Wav2Vec2Config(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        conv_dim=(16, 16, 16),
        conv_kernel=(10, 5, 4),
        conv_stride=(5, 5, 4),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        feat_extract_norm="layer",
        do_stable_layer_norm=True,
        pad_token_id=vocab["<pad>"],
        ctc_loss_reduction="mean",
        mask_time_prob=0.0,
    )
    Wav2Vec2ForCTC(config).eval().save_pretrained(folder)
    Wav2Vec2Processor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def sine_clip(seconds: float, frequency: float, rate: int = SAMPLE_RATE, seed: int = 0) -> np.ndarray:
    """A sine tone with a little noise, float32 in [-1, 1]."""
    t = np.arange(int(seconds * rate)) / rate
    noise = np.random.default_rng(seed).normal(0.0, 0.01, t.shape)
    return (0.5 * np.sin(2 * np.pi * frequency * t) + noise).astype(np.float32)

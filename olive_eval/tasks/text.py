"""Text tasks: classification, token classification, embeddings and text generation."""

from __future__ import annotations

from olive_eval.tasks.base import Task, register_task
from olive_eval.tasks.call_mode import CallMode
from olive_eval.tasks.runtime_outputs import OUTPUT_LENGTHS


@register_task("text-classification")
class TextClassification(Task):
    model_classes = ("AutoModelForSequenceClassification",)
    post_process = "text_classification_post_process"


@register_task("token-classification")
class TokenClassification(Task):
    aliases = ("ner",)
    model_classes = ("AutoModelForTokenClassification",)
    pre_process = "ner_huggingface_preprocess"
    post_process = "ner_post_process"


@register_task("feature-extraction")
class FeatureExtraction(Task):
    """Token states or an encoder's frames; an audio encoder's frame counts come with them."""

    model_classes = ("AutoModel",)
    provides = (OUTPUT_LENGTHS,)
    pre_process = "tokenizer_pre_process"


@register_task("text-generation")
class TextGeneration(Task):
    """Generated text (``decode``) comes from ``generate()``; perplexity reads a forward pass's logits."""

    model_classes = ("AutoModelForCausalLM",)
    call_modes = (CallMode.GENERATE, CallMode.FORWARD)
    pre_process = "text_generation_huggingface_pre_process"
    post_process = "decode"

"""Vision tasks: image classification, image-text-to-text, and Olive's vision QA tasks with the metrics each
allows (Olive: vision-vqa -> exact_match; vision-chart-qa -> relaxed_accuracy; vision-ocr -> word_sort_ratio;
here vqa_accuracy joins vision-vqa and anls joins vision-ocr)."""

from __future__ import annotations

from olive_eval.tasks.base import Task, register_task
from olive_eval.tasks.call_mode import CallMode


@register_task("image-classification")
class ImageClassification(Task):
    model_classes = ("AutoModelForImageClassification",)
    pre_process = "image_classification_pre_process"
    post_process = "text_classification_post_process"


@register_task("image-text-to-text")
class ImageTextToText(Task):
    model_classes = ("AutoModelForImageTextToText", "AutoModelForVision2Seq")
    call_modes = (CallMode.GENERATE, CallMode.FORWARD)


class VisionQuestionAnswering(ImageTextToText):
    """Olive's vision QA tasks: an image and a question in, an answer out."""

    pre_process = "vision_vqa_pre_process"
    dataloader = "vision_vqa_dataloader"


@register_task("vision-vqa")
class VisionVqa(VisionQuestionAnswering):
    metrics = ("exact_match", "vqa_accuracy")


@register_task("vision-chart-qa")
class VisionChartQa(VisionQuestionAnswering):
    metrics = ("relaxed_accuracy",)


@register_task("vision-ocr")
class VisionOcr(VisionQuestionAnswering):
    metrics = ("anls", "word_sort_ratio")

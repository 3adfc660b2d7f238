"""Audio tasks: speech recognition and audio classification."""

from __future__ import annotations

from olive_eval.tasks.base import Task, register_task
from olive_eval.tasks.call_mode import CallMode
from olive_eval.tasks.runtime_outputs import OUTPUT_LENGTHS


@register_task("automatic-speech-recognition")
class SpeechRecognition(Task):
    """A sequence-to-sequence model (Whisper) generates, decoded by ``decode``; a CTC model (wav2vec2) runs
    forward, decoded by ``ctc_decode`` over each clip's own frames (``output_lengths``). Inputs no post-process
    reads get a forward pass, which every speech model has."""

    aliases = ("speech-transcription",)
    model_classes = ("AutoModelForSpeechSeq2Seq", "AutoModelForCTC")
    call_modes = (CallMode.FORWARD, CallMode.GENERATE)
    provides = (OUTPUT_LENGTHS,)
    pre_process = "speech_transcription_pre_process"


@register_task("audio-classification")
class AudioClassification(Task):
    model_classes = ("AutoModelForAudioClassification",)
    provides = (OUTPUT_LENGTHS,)
    pre_process = "audio_classification_pre_process"
    post_process = "text_classification_post_process"

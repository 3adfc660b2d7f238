"""Data: labelled datasets through ``datasets``, dummy inputs for timing, and post-processing."""

from olive_eval.data.dataset import LabelledData, load_labelled_data
from olive_eval.data.dummy import dummy_inputs
from olive_eval.data.post_process import post_process

__all__ = ["LabelledData", "dummy_inputs", "load_labelled_data", "post_process"]

"""Prediction passes: one model streamed over one data config, scored as it goes, in shards or with repeats."""

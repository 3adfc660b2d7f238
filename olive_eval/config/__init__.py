"""The run config: pydantic v2 models, strict, with errors that name the JSON path."""

from olive_eval.config.loader import load_run_config
from olive_eval.config.run import RunConfig

__all__ = ["RunConfig", "load_run_config"]

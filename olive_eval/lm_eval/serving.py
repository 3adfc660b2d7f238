"""Which model types serve lm-eval's requests, and the lm-eval ``LM`` over a model the run loaded.

The harness adapts the runtimes: a runtime knows nothing of lm-eval, and this module says, per model type, which
request types (``loglikelihood``, ``loglikelihood_rolling``, ``generate_until``) it serves and how to wrap a
loaded model of that type. A transformers model is lm-eval's own ``HFLM`` around the loaded module; a GenAI
model is lm-eval's ``onnxruntime-genai`` backend around the loaded ``og.Model``; a Python model is
:class:`olive_eval.lm_eval.python_lm.PythonLM`. A model type registered in no entry here serves nothing.
A plugin's model type serves lm-eval tasks by registering its :class:`Serving` in :data:`serving_registry`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olive_eval.lm_eval import lm_eval_package
from olive_eval.lm_eval.adapters import GENERATE, LOGLIKELIHOOD, REQUESTS, ROLLING
from olive_eval.lm_eval.options import AdapterOptions
from olive_eval.registry import Registry
from olive_eval.tasks.base import find_task


@dataclass(frozen=True)
class Serving:
    """How one model type serves lm-eval."""

    #: The request types a model config serves, known before it loads; None when only the loaded model knows.
    requests: Callable[[Any], frozenset[str] | None]
    #: An lm-eval ``LM`` over the loaded runtime, given the adapter options.
    adapter: Callable[[Any, AdapterOptions], Any]
    #: The request types the loaded runtime serves (default: :attr:`requests` of its config).
    served: Callable[[Any], frozenset[str]] | None = None


#: Model type → how it serves lm-eval.
serving_registry: Registry[Serving] = Registry("lm-eval serving", packages=("olive_eval.lm_eval.serving",))


def _serving(model_type: str) -> Serving | None:
    return serving_registry.get(model_type) if model_type in serving_registry else None


def requests_of(model_config: Any) -> frozenset[str] | None:
    """The lm-eval request types ``model_config``'s model serves, known before it loads; None when only the
    loaded model knows (:func:`served_by`)."""
    serving = _serving(model_config.type)
    return frozenset() if serving is None else serving.requests(model_config)


def served_by(runtime: Any) -> frozenset[str]:
    """The lm-eval request types the loaded model serves."""
    serving = _serving(runtime.model_type)
    if serving is None:
        return frozenset()
    if serving.served is not None:
        return serving.served(runtime)
    return serving.requests(runtime.config) or frozenset()


def adapter_for(runtime: Any, options: AdapterOptions) -> Any:
    """An lm-eval ``LM`` over the loaded model, for the model types that serve lm-eval tasks."""
    serving = _serving(runtime.model_type)
    if serving is None:
        raise NotImplementedError(f"{runtime.model_type} models do not run lm-eval tasks")
    return serving.adapter(runtime, options)


def _hf_requests(model_config: Any) -> frozenset[str]:
    """A causal or sequence-to-sequence language model serves all of lm-eval's requests (through ``HFLM``)."""
    task = find_task(getattr(model_config, "task", None)) if model_config is not None else None
    if task is not None and any(c.endswith(("CausalLM", "Seq2SeqLM")) for c in task.model_classes):
        return frozenset(REQUESTS)
    return frozenset()


def _hf_adapter(runtime: Any, options: AdapterOptions) -> Any:
    from olive_eval.lm_eval.hf_lm import hf_lm

    return hf_lm(runtime.model, runtime.config.folder() or runtime.config.model_path, runtime.device, options)


def _genai_adapter(runtime: Any, options: AdapterOptions) -> Any:
    """lm-eval's own GenAI backend on the loaded model."""
    from olive_eval.lm_eval.genai_lm import LoadedGenAILM
    from olive_eval.runtimes.genai import genai

    return LoadedGenAILM(genai(), runtime.model, Path(runtime.config.model_path), options)


def _python_served(runtime: Any) -> frozenset[str]:
    """What a Python model object serves: generation through its call; the others through its own methods."""
    own = {r for r in (LOGLIKELIHOOD, ROLLING) if callable(getattr(runtime.model, r, None))}
    return frozenset({GENERATE, *own})


def _python_adapter(runtime: Any, options: AdapterOptions) -> Any:
    """:class:`PythonLM` for a Python model object (lm-eval is imported here, on first use)."""
    lm_eval_package()
    from olive_eval.lm_eval.python_lm import PythonLM

    return PythonLM(runtime.model, runtime.user_call, runtime.where, options)


serving_registry.register("HfModel", Serving(_hf_requests, _hf_adapter))
serving_registry.register("GenAIModel", Serving(lambda _config: frozenset(REQUESTS), _genai_adapter))
serving_registry.register("PythonModel", Serving(lambda _config: None, _python_adapter, _python_served))

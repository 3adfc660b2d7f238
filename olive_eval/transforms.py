"""One registry of text transforms (``str -> str``), shared by metric filters, speech normalizers and answers.

A transform is named in a config as ``"lowercase"``, as ``{"type": "regex", "pattern": "#### (\\d+)"}`` (its
parameters inline, or under ``"params"``), or as a list of these: a list is a transform too, applied in order.
The same spec works as a metric filter (:mod:`olive_eval.data.filters`), as the ``normalizer`` of the speech
error rates (:mod:`olive_eval.metrics.speech.normalize` registers Olive's and Whisper's normalizers here) and as
the ``normalizer`` of the answer metrics, so a transform a user script registers works in all three::

    from olive_eval.transforms import register_transform

    @register_transform("no_articles")
    def no_articles(text: str) -> str:
        return " ".join(w for w in text.split() if w.lower() not in ("a", "an", "the"))

Other packages add transforms through the entry-point group ``olive_eval.transforms`` (a function or a
:class:`TextTransform` subclass). The registry sits below ``data/`` and ``metrics/``, as both draw from it.
"""

from __future__ import annotations

import json
import re
import string
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from pydantic import field_validator

from olive_eval.registry import Registry
from olive_eval.registry_function import FunctionStep, register_step
from olive_eval.registry_spec import SpecForm
from olive_eval.strict_model import StrictModel

#: What a config may give as a transform: a name, ``{"type": name, ...params}``, or a list of either.
TransformSpec = str | dict[str, Any] | list[Any]


class TransformParams(StrictModel):
    """A transform's config: its ``type`` and its own keys (none here; subclasses add theirs)."""

    type: str


class TextTransform:
    """Base of every transform: ``__call__`` maps one text; ``many`` maps a list (override for a bulk path)."""

    name: str = ""
    Params: ClassVar[type[TransformParams]] = TransformParams

    def __init__(self, params: TransformParams) -> None:
        self.params = params

    def __call__(self, text: str) -> str:
        raise NotImplementedError

    def many(self, texts: list[str]) -> list[str]:
        return [self(t) for t in texts]

    def __repr__(self) -> str:
        keys = self.params.model_dump(exclude={"type"})
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in keys.items())})"


class FunctionTransform(FunctionStep, TextTransform):
    """A registered ``f(text) -> text``; pickles by reference to ``f``."""

    def __call__(self, text: str) -> str:
        return self.func(text)  # type: ignore[no-any-return]


class Chain(TextTransform):
    """Several transforms applied in order: a list in a config."""

    def __init__(self, steps: Sequence[TextTransform]) -> None:
        super().__init__(TransformParams(type="chain"))
        self.steps = list(steps)

    def __call__(self, text: str) -> str:
        for step in self.steps:
            text = step(text)
        return text

    def many(self, texts: list[str]) -> list[str]:
        for step in self.steps:
            texts = step.many(texts)
        return texts

    def __repr__(self) -> str:
        return f"Chain({self.steps!r})"


transform_registry: Registry[Any] = Registry(
    "text transform",
    ("olive_eval.transforms", "olive_eval.metrics.speech.normalize"),
    group="olive_eval.transforms",
    adopt=lambda name, obj, origin: register_transform(name)(obj),
    form=SpecForm(
        built=TextTransform,
        names=True,
        not_object="expected a transform name, an object with a 'type' or a list, got {got}",
        missing="expected a transform name, got {got}",
        not_text="expected a transform name, got {got}",
    ),
)
"""Name → a :class:`TextTransform` subclass, or a :class:`~olive_eval.registry_function.FunctionEntry` for a
registered function."""

T = TypeVar("T")


def register_transform(name: str) -> Callable[[T], T]:
    """Register a text transform under ``name``: a :class:`TextTransform` subclass (with its own ``Params``) or
    a plain function ``f(text) -> text`` without parameters. Returns what it decorates unchanged."""

    def wrap(obj: T) -> T:
        register_step(transform_registry, name, obj, TextTransform, FunctionTransform, "register_transform")
        return obj

    return wrap


def build_transform(spec: TransformSpec | TextTransform, path: str = "normalizer") -> TextTransform:
    """The transform a spec names (a list: a :class:`Chain`); ValueError as ``"<path>[.key]: what is wrong"``."""
    if isinstance(spec, list):
        return Chain([build_transform(step, f"{path}[{i}]") for i, step in enumerate(spec)])
    return transform_registry.build(spec, path)  # type: ignore[no-any-return]


def spec_key(spec: TransformSpec | None) -> str:
    """A stable text for a spec (for cache and shared-statistics keys): names as they are, the rest as JSON."""
    return spec if isinstance(spec, str) or spec is None else json.dumps(spec, sort_keys=True)


# --------------------------------------------------------------------------------------------- built-ins


@register_transform("lowercase")
def lowercase(text: str) -> str:
    return text.lower()


@register_transform("uppercase")
def uppercase(text: str) -> str:
    return text.upper()


@register_transform("strip")
def strip(text: str) -> str:
    """Leading and trailing whitespace removed (Unicode whitespace, as ``str.strip``)."""
    return text.strip()


class _PunctuationTable(dict):  # type: ignore[type-arg]
    """A ``str.translate`` table filled on demand: a code point maps to None (deleted) when it is punctuation."""

    def __missing__(self, code: int) -> int | None:
        char = chr(code)
        value = None if char in string.punctuation or unicodedata.category(char).startswith("P") else code
        self[code] = value
        return value


_PUNCTUATION = _PunctuationTable()


@register_transform("remove_punctuation")
def remove_punctuation(text: str) -> str:
    """Deletes every Unicode punctuation character (general category P*: ``¿ « » — 、 。`` ...) and every
    character of ASCII ``string.punctuation``, whose ``$ + < = > ^ ` | ~`` are Unicode symbols (S*). Other
    symbols (``€ © ° ✓``) stay, and nothing is replaced by a space."""
    return text.translate(_PUNCTUATION)


class RegexParams(TransformParams):
    pattern: str
    group_select: int = 0
    fallback: str = "[invalid]"

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {value!r}: {exc}") from None
        return value


@register_transform("regex")
class Regex(TextTransform):
    """The ``group_select``-th match of ``pattern`` (0: the first, -1: the last), stripped, else ``fallback``.

    As in lm-eval (``re.findall``): without groups a match is the whole matched text; with one group it is
    that group (possibly empty); with several it is the first non-empty group, and ``fallback`` when all are
    empty. A ``group_select`` beyond the matches found gives ``fallback``.
    """

    Params = RegexParams
    params: RegexParams

    def __init__(self, params: TransformParams) -> None:
        super().__init__(params)
        self._regex = re.compile(self.params.pattern)

    def __call__(self, text: str) -> str:
        matches = self._regex.findall(text)
        n, k = len(matches), self.params.group_select
        if not -n <= k < n:
            return self.params.fallback
        match = matches[k]
        if isinstance(match, tuple):
            match = next((group for group in match if group), None)
            if match is None:
                return self.params.fallback
        return match.strip()

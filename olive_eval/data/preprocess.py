"""Pre-processing components (``pre_process_data_config``): rows → model-ready columns, once per run.

Each turns a dataset's chunks into :class:`Prepared` data. Those that use a tokenizer or processor
declare it (``processor_source``), so models sharing one share the prepared data; the engine caches it.
Here: the base, the column and text components, images and a user's function; a task's own pre-process
(text generation, speech, vqa, ...) is a module of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from olive_eval.data.arrow import table_columns
from olive_eval.data.batch import GROUP_SEP, Columns
from olive_eval.data.components import Component, ComponentParams, register_component
from olive_eval.data.prepared import PrepareContext, Prepared
from olive_eval.data.sources import Source
from olive_eval.errors import EvaluationError


class PreProcess(Component):
    """Base: ``prepare(source, context)`` gives the prepared data."""

    def processor_source(self, context: PrepareContext) -> str | None:
        """The tokenizer/processor this pre-processing uses (a folder or hub name), or None."""
        return None

    def prepare(self, source: Source, context: PrepareContext) -> Prepared:
        raise NotImplementedError


def check_columns(source: Source, wanted: list[str], key: str) -> None:
    missing = [c for c in wanted if c not in source.columns]
    if missing:
        raise EvaluationError(
            f"data config '{source.name}': {key} '{missing[0]}' is not a column of the dataset; "
            f"columns: {', '.join(source.columns)}"
        )


# ---------------------------------------------------------------------------------------------- columns and text
class HuggingfacePreProcessParams(ComponentParams):
    """Olive's ``huggingface_pre_process``: model inputs from columns, text tokenized with the model's tokenizer."""

    input_cols: list[str] | dict[str, str] | None = Field(
        None,
        description="Columns that feed the model (a {column: input name} mapping renames them); default: all but the label",
    )
    label_col: str | None = Field(None, description="The references column; default 'label' when there is one")
    model_name: str | None = Field(None, description="Tokenizer folder or cached hub name; default: the model's own")
    max_samples: int | None = Field(None, ge=1)
    trust_remote_code: bool = False
    align_labels: bool = False
    max_length: int | None = Field(None, ge=1)
    padding: bool | Literal["longest", "max_length"] = True
    truncation: bool = True
    add_special_tokens: bool = True
    encode_separately: bool = Field(
        False,
        description="Tokenize each text column on its own, as a group the model is called on separately (a "
        "bi-encoder's sentence pair); default: the columns together, as one sequence pair (Olive's)",
    )
    task: str | None = Field(None, description="Olive's task, which picks the container's default components")


@register_component("pre-process", "huggingface_pre_process")
class HuggingfacePreProcess(PreProcess):
    Params = HuggingfacePreProcessParams
    default_label: str | None = "label"

    def processor_source(self, context: PrepareContext) -> str | None:
        p: HuggingfacePreProcessParams = self.params  # type: ignore[assignment]
        if p.model_name is not None:
            return p.model_name
        return str(context.processor_folder) if context.processor_folder is not None else None

    def _mapping(self, source: Source) -> tuple[dict[str, str], str | None]:
        p: HuggingfacePreProcessParams = self.params  # type: ignore[assignment]
        label = p.label_col
        if label is None and self.default_label in source.columns:
            label = self.default_label
        if p.align_labels:
            raise EvaluationError(
                "pre_process_data_config.align_labels is Olive's; olive-eval does not align labels yet"
            )
        if p.input_cols is None:
            mapping = {c: c for c in source.columns if c != label}
        elif isinstance(p.input_cols, dict):
            mapping = dict(p.input_cols)
        else:
            mapping = {c: c for c in p.input_cols}
        check_columns(source, list(mapping), "input column")
        if label is not None:
            check_columns(source, [label], "label column")
        return mapping, label

    def prepare(self, source: Source, context: PrepareContext) -> Prepared:
        p: HuggingfacePreProcessParams = self.params  # type: ignore[assignment]
        mapping, label = self._mapping(source)
        needed = [*mapping, *([label] if label else [])]
        probe = next(iter(source.chunks()), None)
        text_cols = [
            c for c in mapping if probe is not None and probe.num_rows and isinstance(probe.column(c)[0].as_py(), str)
        ]
        tokenizer = self._tokenizer(context) if text_cols else None
        inputs: list[str] = []
        pad: dict[str, int | float] = {}
        if tokenizer is not None:
            keys = self._token_keys(tokenizer)
            groups = [mapping[c] for c in text_cols] if p.encode_separately else [None]
            for group in groups:
                for key in keys:
                    name = f"{group}{GROUP_SEP}{key}" if group else key
                    inputs.append(name)
                    pad[name] = _pad_value(tokenizer, key)
        inputs += [mapping[c] for c in mapping if c not in text_cols]
        metadata = [c for c in source.columns if c not in needed]

        def chunks() -> Iterator[Columns]:
            for table in limited_tables(source, p.max_samples):
                raw = table_columns(table)
                out: Columns = {mapping[c]: raw[c] for c in mapping if c not in text_cols}
                if tokenizer is not None:
                    out.update(self._tokenize(tokenizer, [raw[c] for c in text_cols], [mapping[c] for c in text_cols]))
                if label is not None:
                    out[label] = raw[label]
                for c in metadata:
                    out.setdefault(c, raw[c])
                for c in text_cols:  # keep the text itself: metrics and instance files may show it
                    out.setdefault(c, raw[c])
                yield out

        columns = [*inputs, *([label] if label else []), *metadata, *text_cols]
        key = self.processor_source(context) if tokenizer is not None else None
        return Prepared(
            source.name, chunks, inputs, label, columns, pad, "right", source.num_rows, key, as_stored=tokenizer is None
        )

    def _tokenizer(self, context: PrepareContext) -> Any:
        from olive_eval.data.processor import tokenizer_of

        p: HuggingfacePreProcessParams = self.params  # type: ignore[assignment]
        return tokenizer_of(context.processor(p.model_name, trust_remote_code=p.trust_remote_code))

    @staticmethod
    def _token_keys(tokenizer: Any) -> list[str]:
        return [
            k
            for k in tokenizer("probe", add_special_tokens=True)
            if k in ("input_ids", "attention_mask", "token_type_ids")
        ]

    def _tokenize(self, tokenizer: Any, texts: list[list[str]], names: list[str]) -> Columns:
        p: HuggingfacePreProcessParams = self.params  # type: ignore[assignment]
        kwargs = {
            "truncation": p.truncation,
            "max_length": p.max_length,
            "add_special_tokens": p.add_special_tokens,
            "padding": p.padding == "max_length" and "max_length",
        }
        out: Columns = {}
        if p.encode_separately:
            for name, column in zip(names, texts, strict=True):
                for key, values in tokenizer(list(column), **kwargs).items():
                    out[f"{name}{GROUP_SEP}{key}"] = [np.asarray(v, dtype=np.int64) for v in values]
            return out
        encoded = tokenizer(*[list(c) for c in texts], **kwargs)
        return {key: [np.asarray(v, dtype=np.int64) for v in values] for key, values in encoded.items()}


@register_component("pre-process", "tokenizer_pre_process")
class TokenizerPreProcess(HuggingfacePreProcess):
    """Olive's ``tokenizer_pre_process``: like ``huggingface_pre_process``, without a label column."""

    default_label = None


@register_component("pre-process", "column_mapping")
class ColumnMapping(HuggingfacePreProcess):
    """Columns as they are (numeric columns feed the model; text stays text): no tokenizer involved."""

    def _tokenizer(self, context: PrepareContext) -> Any:
        return None

    def processor_source(self, context: PrepareContext) -> str | None:
        return None


class SkipParams(ComponentParams):
    input_cols: list[str] | None = None
    label_col: str | None = None


@register_component("pre-process", "skip_pre_process")
class SkipPreProcess(PreProcess):
    """Olive's ``pre_process`` / ``skip_pre_process``: every column as it is; all but the label feed the model.
    The label is ``label_col``, else the column the dataset names as its references (raw_dataset's annotations)."""

    Params = SkipParams

    def prepare(self, source: Source, context: PrepareContext) -> Prepared:
        p: SkipParams = self.params  # type: ignore[assignment]
        label = p.label_col or source.label
        inputs = p.input_cols or [c for c in source.columns if c != label]
        check_columns(source, [*inputs, *([label] if label else [])], "column")

        def chunks() -> Iterator[Columns]:
            for table in source.chunks():
                yield table_columns(table)

        return Prepared(
            source.name, chunks, inputs, label, list(source.columns), num_rows=source.num_rows, as_stored=True
        )


register_component("pre-process", "pre_process")(SkipPreProcess)


# ---------------------------------------------------------------------------------------------- images
class ImageClassificationParams(ComponentParams):
    image_col: str = "image"
    label_col: str | None = "label"
    model_name: str | None = None
    max_samples: int | None = Field(None, ge=1)
    on_error: Literal["raise", "skip"] = "raise"


@register_component("pre-process", "image_classification_pre_process")
class ImageClassificationPreProcess(PreProcess):
    """Images decoded with Pillow, made into ``pixel_values`` by the model's image processor."""

    Params = ImageClassificationParams

    def processor_source(self, context: PrepareContext) -> str | None:
        p: ImageClassificationParams = self.params  # type: ignore[assignment]
        return p.model_name or (str(context.processor_folder) if context.processor_folder else None)

    def prepare(self, source: Source, context: PrepareContext) -> Prepared:
        from olive_eval.data.images import decode_image_column

        p: ImageClassificationParams = self.params  # type: ignore[assignment]
        check_columns(source, [p.image_col, *([p.label_col] if p.label_col else [])], "column")
        processor = context.processor(p.model_name)

        def chunks() -> Iterator[Columns]:
            start = 0
            for table in limited_tables(source, p.max_samples):
                raw = table_columns(table)
                names = [f"example {start + i}" for i in range(table.num_rows)]
                images, kept, skipped = decode_image_column(
                    raw[p.image_col], mode="RGB", on_error=p.on_error, names=names
                )
                for message in skipped:
                    context.note(f"skipped an image that cannot be decoded: {message}")
                start += table.num_rows
                if not images:
                    continue
                pixels = processor(images=images, return_tensors="np")["pixel_values"]
                out: Columns = {"pixel_values": pixels}
                for c in source.columns:
                    if c != p.image_col:
                        out[c] = [raw[c][i] for i in kept] if not isinstance(raw[c], np.ndarray) else raw[c][kept]
                yield out

        return Prepared(
            source.name,
            chunks,
            ["pixel_values"],
            p.label_col,
            ["pixel_values", *source.columns],
            num_rows=None,
            processor_key=self.processor_source(context),
        )


def limited_tables(source: Source, max_samples: int | None) -> Iterator[Any]:
    """The source's tables, cut to the first ``max_samples`` rows (all of them when it is None)."""
    remaining = max_samples
    for table in source.chunks():
        if remaining is not None:
            if remaining <= 0:
                return
            table = table.slice(0, remaining)
            remaining -= table.num_rows
        yield table


def _pad_value(tokenizer: Any, key: str) -> int:
    if key == "input_ids":
        return int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)
    return 0


def user_pre_process(func: Any, name: str) -> type[PreProcess]:
    """A user script's function ``f(columns: dict, **params) -> dict`` as a pre-process component: it gets
    each chunk's columns and returns the model's (all but ``label_col`` feed the model)."""

    class UserParams(ComponentParams):
        """The function's own keyword arguments, passed through."""

        model_config = ComponentParams.model_config | {"extra": "allow"}
        label_col: str | None = None

        @model_validator(mode="before")
        @classmethod
        def _reject_unknown_keys(cls, data: Any) -> Any:  # the function's kwargs are not known here
            return data

    class UserPreProcess(PreProcess):
        Params = UserParams

        def prepare(self, source: Source, context: PrepareContext) -> Prepared:
            params = {k: v for k, v in self.params.model_dump().items() if k not in ("type", "label_col")}
            label = self.params.label_col  # type: ignore[attr-defined]
            probe: Columns = {}

            def chunks() -> Iterator[Columns]:
                for table in source.chunks():
                    out = func(table_columns(table), **params)
                    if not isinstance(out, dict):
                        raise EvaluationError(
                            f"pre-process '{name}' returned {type(out).__name__}; it must return a dict of columns"
                        )
                    yield out

            for chunk in chunks():
                probe = chunk
                break
            inputs = [c for c in probe if c != label]
            return Prepared(source.name, chunks, inputs, label, list(probe), num_rows=source.num_rows)

    UserPreProcess.name = name
    return UserPreProcess

"""Valor's LLM-guided text-generation metrics as accuracy sub-types (formulas in :mod:`.kernels`, docs/judged.md).

Fields: ``prediction`` (the generated text), ``references`` (one or several ground-truth answers), and the data
columns ``query`` (the question), ``contexts`` (the retrieved contexts, in retrieval order: a list of texts, or
one text) and ``source`` (the text a summary summarizes). Each sub-type's ``reads`` names what it takes, so a
data config that lacks one is a config error when the run is planned.
"""

from __future__ import annotations

from typing import Any

from olive_eval.metrics.judged.base import Failed, Issue, JudgedMetric, first_issue, text_of, texts_of
from olive_eval.metrics.judged.kernels import any_yes, context_precision, correctness_f1, proportion
from olive_eval.metrics.judged.parsing import Unparseable, parse_score
from olive_eval.metrics.registry import register_metric

__all__ = [
    "AnswerCorrectness",
    "AnswerRelevance",
    "Bias",
    "ContextPrecision",
    "ContextRecall",
    "ContextRelevance",
    "Faithfulness",
    "Hallucination",
    "SummaryCoherence",
    "Toxicity",
]

Result = float | Issue


def _inputs(*columns: tuple[list[Any], str, bool]) -> list[list[Any]]:
    """Each column as texts (``True``: a list of texts per example) or the Failed that excludes the example."""
    return [[(texts_of if many else text_of)(v, what) for v in values] for values, what, many in columns]


def _bad(*values: Any) -> Failed | None:
    return next((v for v in values if isinstance(v, Failed)), None)


class _ExtractThenJudge(JudgedMetric):
    """Extract items (statements, claims, opinions) from the prediction, then one verdict per item."""

    extract_kind: str
    verdict: str
    empty: float
    reads = ("prediction",)

    def fields(self, row: list[Any]) -> dict[str, Any]:
        return {}

    def judge_examples(self, *columns: list[Any]) -> list[Result]:
        names = self.reads
        rows = list(zip(*_inputs(*((c, n, n == "contexts") for c, n in zip(columns, names, strict=True))), strict=True))
        items = self.extract([None if _bad(*r) else r[0] for r in rows], self.extract_kind)
        jobs = [
            None if _bad(*r) or not isinstance(it, list) else (self.verdict, {"items": it, **self.fields(list(r))})
            for r, it in zip(rows, items, strict=True)
        ]
        out: list[Result] = []
        for r, it, verdicts in zip(rows, items, self.verdicts(jobs), strict=True):
            issue = _bad(*r) or first_issue(it, verdicts)
            out.append(issue if issue is not None else proportion(verdicts, self.empty))  # type: ignore[arg-type]
        return out


@register_metric
class AnswerRelevance(_ExtractThenJudge):
    """Relevant statements / statements of the prediction, judged against the query (0 with no statements)."""

    name = "answer_relevance"
    higher_is_better = True
    reads = ("prediction", "query")
    uses = ("statements", "relevance")
    extract_kind, verdict, empty = "statements", "relevance", 0.0

    def fields(self, row: list[Any]) -> dict[str, Any]:
        return {"query": row[1]}


@register_metric
class Bias(_ExtractThenJudge):
    """Biased opinions / opinions of the prediction; 0 with no opinions."""

    name = "bias"
    higher_is_better = False
    uses = ("opinions", "bias")
    extract_kind, verdict, empty = "opinions", "bias", 0.0


@register_metric
class Toxicity(_ExtractThenJudge):
    """Toxic opinions / opinions of the prediction; 0 with no opinions."""

    name = "toxicity"
    higher_is_better = False
    uses = ("opinions", "toxicity")
    extract_kind, verdict, empty = "opinions", "toxicity", 0.0


@register_metric
class Faithfulness(_ExtractThenJudge):
    """Claims of the prediction the contexts imply / claims; 1 with no claims (none is unfaithful)."""

    name = "faithfulness"
    higher_is_better = True
    reads = ("prediction", "contexts")
    uses = ("claims", "implied")
    extract_kind, verdict, empty = "claims", "implied", 1.0

    def fields(self, row: list[Any]) -> dict[str, Any]:
        return {"contexts": row[1]}


class _PerContext(JudgedMetric):
    """One prompt per example with a verdict per context: the share of "yes"."""

    verdict: str

    def jobs(self, rows: list[tuple[Any, ...]]) -> list[tuple[str, dict[str, Any]] | None]:
        raise NotImplementedError

    def judge_examples(self, *columns: list[Any]) -> list[Result]:
        rows = list(
            zip(*_inputs(*((c, n, n == "contexts") for c, n in zip(columns, self.reads, strict=True))), strict=True)
        )
        jobs = [None if _bad(*r) else job for r, job in zip(rows, self.jobs(rows), strict=True)]
        return [
            _bad(*r) or first_issue(v) or proportion(v, 0.0)  # type: ignore[arg-type]
            for r, v in zip(rows, self.verdicts(jobs), strict=True)
        ]


@register_metric
class Hallucination(_PerContext):
    """Contexts the prediction contradicts / contexts."""

    name = "hallucination"
    higher_is_better = False
    reads = ("prediction", "contexts")
    uses = ("contradiction",)

    def jobs(self, rows: list[tuple[Any, ...]]) -> list[tuple[str, dict[str, Any]] | None]:
        return [("contradiction", {"text": r[0], "items": r[1]}) for r in rows]


@register_metric
class ContextRelevance(_PerContext):
    """Contexts relevant to the query / contexts."""

    name = "context_relevance"
    higher_is_better = True
    reads = ("query", "contexts")
    uses = ("context_relevance",)

    def jobs(self, rows: list[tuple[Any, ...]]) -> list[tuple[str, dict[str, Any]] | None]:
        return [("context_relevance", {"query": r[0], "items": r[1]}) for r in rows]


def _units(refs: list[Any]) -> list[tuple[int, str]]:
    """(example, reference) for every reference of every example that has references."""
    return [(i, ref) for i, rs in enumerate(refs) if not isinstance(rs, Failed) for ref in rs]


def _best(n: int, units: list[tuple[int, str]], scores: list[Result], bad: list[Failed | None]) -> list[Result]:
    """Per example, the maximum over its references; an issue with any reference excludes the example."""
    out: list[Result] = []
    for i in range(n):
        mine = [s for (j, _), s in zip(units, scores, strict=True) if j == i]
        issue = bad[i] or first_issue(*mine)
        out.append(issue if issue is not None else max(mine))  # type: ignore[type-var]
    return out


@register_metric
class AnswerCorrectness(JudgedMetric):
    """F1 of prediction statements against reference statements, the best over the references."""

    name = "answer_correctness"
    higher_is_better = True
    reads = ("prediction", "references")
    uses = ("statements", "support")

    def judge_examples(self, predictions: list[Any], references: list[Any]) -> list[Result]:
        preds, refs = _inputs((predictions, "prediction", False), (references, "references", True))
        bad = [_bad(p, r) for p, r in zip(preds, refs, strict=True)]
        units = [(i, ref) for i, ref in _units(refs) if bad[i] is None]
        pred_items = self.extract([None if b else p for p, b in zip(preds, bad, strict=True)], "statements")
        ref_items = self.extract([ref for _, ref in units], "statements")
        jobs: list[tuple[str, dict[str, Any]] | None] = []
        for (i, ref), items in zip(units, ref_items, strict=True):
            ok = isinstance(pred_items[i], list) and isinstance(items, list)
            jobs.append(("support", {"text": ref, "items": pred_items[i]}) if ok else None)
            jobs.append(("support", {"text": preds[i], "items": items}) if ok else None)
        verdicts = self.verdicts(jobs)
        scores: list[Result] = []
        for u, ((i, _), items) in enumerate(zip(units, ref_items, strict=True)):
            supported, present = verdicts[2 * u], verdicts[2 * u + 1]
            issue = first_issue(pred_items[i], items, supported, present)
            scores.append(issue if issue is not None else correctness_f1(supported, present))  # type: ignore[arg-type]
        return _best(len(preds), units, scores, bad)


@register_metric
class ContextRecall(JudgedMetric):
    """Reference statements attributable to the contexts / reference statements, the best over the references
    (0 for a reference with no statements)."""

    name = "context_recall"
    higher_is_better = True
    reads = ("references", "contexts")
    uses = ("statements", "attribution")

    def judge_examples(self, references: list[Any], contexts: list[Any]) -> list[Result]:
        refs, ctxs = _inputs((references, "references", True), (contexts, "contexts", True))
        bad = [_bad(r, c) for r, c in zip(refs, ctxs, strict=True)]
        units = [(i, ref) for i, ref in _units(refs) if bad[i] is None]
        items = self.extract([ref for _, ref in units], "statements")
        jobs = [
            ("attribution", {"contexts": ctxs[i], "items": it}) if isinstance(it, list) else None
            for (i, _), it in zip(units, items, strict=True)
        ]
        scores: list[Result] = [
            first_issue(it, v) or proportion(v, 0.0)  # type: ignore[arg-type]
            for it, v in zip(items, self.verdicts(jobs), strict=True)
        ]
        return _best(len(refs), units, scores, bad)


@register_metric
class ContextPrecision(JudgedMetric):
    """Mean precision@k over the contexts judged useful, a context useful if it is for any reference."""

    name = "context_precision"
    higher_is_better = True
    reads = ("query", "references", "contexts")
    uses = ("usefulness",)

    def judge_examples(self, queries: list[Any], references: list[Any], contexts: list[Any]) -> list[Result]:
        qs, refs, ctxs = _inputs(
            (queries, "query", False), (references, "references", True), (contexts, "contexts", True)
        )
        bad = [_bad(q, r, c) for q, r, c in zip(qs, refs, ctxs, strict=True)]
        units = [(i, ref) for i, ref in _units(refs) if bad[i] is None]
        jobs = [("usefulness", {"query": qs[i], "answer": ref, "items": ctxs[i]}) for i, ref in units]
        verdicts = self.verdicts(jobs)  # type: ignore[arg-type]
        out: list[Result] = []
        for i in range(len(qs)):
            mine = [v for (j, _), v in zip(units, verdicts, strict=True) if j == i]
            issue = bad[i] or first_issue(*mine)
            out.append(issue if issue is not None else context_precision(any_yes(mine)))  # type: ignore[arg-type]
        return out


@register_metric
class SummaryCoherence(JudgedMetric):
    """The judge's 1-5 rating of the summary (the prediction) against its source text."""

    name = "summary_coherence"
    higher_is_better = True
    reads = ("prediction", "source")
    uses = ("coherence",)

    def judge_examples(self, predictions: list[Any], sources: list[Any]) -> list[Result]:
        preds, srcs = _inputs((predictions, "prediction", False), (sources, "source", False))
        bad = [_bad(p, s) for p, s in zip(preds, srcs, strict=True)]
        prompts = [
            None if b else self.prompt("coherence", source=s, summary=p)
            for p, s, b in zip(preds, srcs, bad, strict=True)
        ]
        replies = self.ask(prompts, parse_score)
        return [
            b or (r if isinstance(r, Failed | Unparseable) else float(r)) for b, r in zip(bad, replies, strict=True)
        ]  # type: ignore[misc]

"""The optional C extension; everything else is in pyproject.toml.

``optional=True``: without a C compiler the install still succeeds, and exact_match, the rank statistics, the
speech edit counts, BLEU's statistics, the ranking curves, the violation reader, the violation matching,
COCO's bbox matching and COCO's accumulation run their numpy (or Python) forms.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "olive_eval.metrics.answers._exact_match",
            ["olive_eval/metrics/answers/_exact_match.c"],
            optional=True,
        ),
        Extension(
            "olive_eval.metrics.classification._curves",
            ["olive_eval/metrics/classification/_curves.c"],
            depends=["olive_eval/metrics/run_jobs.h"],
            optional=True,
        ),
        Extension(
            "olive_eval.metrics.violations._columns",
            ["olive_eval/metrics/violations/_columns.c"],
            optional=True,
        ),
        Extension(
            "olive_eval.metrics.violations._matching",
            ["olive_eval/metrics/violations/_matching.c"],
            optional=True,
        ),
        Extension(
            "olive_eval.metrics.detection._coco_match",
            ["olive_eval/metrics/detection/_coco_match.c"],
            optional=True,
        ),
        Extension(
            "olive_eval.metrics.detection._coco_accumulate",
            ["olive_eval/metrics/detection/_coco_accumulate.c"],
            optional=True,
        ),
        Extension(
            "olive_eval.metrics.regression._ranks",
            ["olive_eval/metrics/regression/_ranks.c"],
            depends=["olive_eval/metrics/regression/column.h"],
            optional=True,
        ),
        Extension(
            "olive_eval.metrics.regression._moments",
            ["olive_eval/metrics/regression/_moments.c"],
            depends=["olive_eval/metrics/regression/column.h"],
            optional=True,
        ),
        Extension(
            "olive_eval.metrics.speech._edit_counts",
            ["olive_eval/metrics/speech/_edit_counts.c"],
            depends=["olive_eval/metrics/run_jobs.h"],
            optional=True,
        ),
        Extension(
            "olive_eval.metrics.text_overlap._bleu_rows",
            ["olive_eval/metrics/text_overlap/_bleu_rows.c"],
            optional=True,
        ),
    ]
)

"""Fidelity: each candidate's outputs scored against the baseline's outputs on the same examples, with no labels.

The measures compare the raw outputs (``kernels``, registered in ``measures``); any registered metric that scores
predictions against references also runs with the baseline's predictions as the references (``fidelity_type``).
"""

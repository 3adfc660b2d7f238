"""The ``user_script`` of a workflow evaluator of type ``"OliveEval"``: importing it registers the evaluator.

Olive imports a user_script by path, twice per workflow; registration is idempotent.
"""

import olive_eval.olive  # noqa: F401

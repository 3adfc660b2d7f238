"""A metric's runtime settings (``user_config.inference_settings`` by framework) and their identity: the work of
a run is grouped by settings, one loaded model per distinct settings."""

from __future__ import annotations

import json
from typing import Any

#: A metric's runtime settings by framework, or None for the model's own.
Settings = dict[str, Any] | None


def settings_key(settings: Settings) -> str:
    """Identity of runtime settings: a pass or a timing run per distinct settings, whatever the runtime."""
    return "" if not settings else json.dumps(settings, sort_keys=True, default=str)

"""A registry names where each entry was defined without parsing source files (cheap at import)."""

from __future__ import annotations

import inspect

import pytest

from olive_eval.registry import Registry, RegistryError


class Widget:
    pass


def make_widget():
    return Widget()


def test_a_function_is_named_by_file_and_line_and_a_class_by_file_and_name():
    registry: Registry[object] = Registry("widget")
    registry.register("f", make_widget)
    registry.register("c", Widget)
    assert registry.origin("f") == f"{__file__}:{inspect.getsourcelines(make_widget)[1]}"
    assert registry.origin("c") == f"{__file__}:Widget"


def test_a_name_taken_by_another_definition_names_both_places():
    registry: Registry[object] = Registry("widget")
    registry.register("w", Widget)
    with pytest.raises(RegistryError, match=r"widget 'w' is registered twice: first in .*:Widget, again in .*:\d+"):
        registry.register("w", make_widget)


def test_the_same_class_registered_again_replaces_itself():
    registry: Registry[object] = Registry("widget")
    registry.register("w", Widget)
    again = type("Widget", (), {"__module__": __name__, "__qualname__": "Widget"})
    assert registry.register("w", again) is again
    assert registry.get("w") is again

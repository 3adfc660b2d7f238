import pytest

from tests.helpers import ToyProblem


@pytest.fixture
def toy(tmp_path):
    return ToyProblem(tmp_path)


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory, monkeypatch):
    """Each test has its own result cache folder (the CLI caches by default): no test sees another's entries,
    and none writes to the user's cache."""
    monkeypatch.setenv("OLIVE_EVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))

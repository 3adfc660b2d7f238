import pytest

from tests.helpers import ToyProblem
from tests.xdist_groups import file_scheduler


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent without it
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile`` by file, with the files of :data:`tests.xdist_groups.SHARED_UNITS` in shared units."""
    if config.getoption("dist") == "loadfile":
        return file_scheduler(config, log)
    return None


@pytest.fixture
def toy(tmp_path):
    return ToyProblem(tmp_path)


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory, monkeypatch):
    """Each test has its own result cache folder (the CLI caches by default): no test sees another's entries,
    and none writes to the user's cache."""
    monkeypatch.setenv("OLIVE_EVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))

import pytest

from tests.helpers import ToyProblem


@pytest.fixture
def toy(tmp_path):
    return ToyProblem(tmp_path)

"""The local Ray the ray executor's tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray for the module (two CPUs, as CI runs it): the executor joins it and leaves it running."""
    import ray  # the dev extras install it; missing, the tests fail rather than skip

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()

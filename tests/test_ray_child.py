"""The Ray tests (``@in_ray_child`` in the files of ``tests.helpers.RAY_CHILD_TESTS``) pass in a child pytest of
their own: a Ray driver changes its process, so none runs in the suite's processes."""
from __future__ import annotations

import pytest

from tests.helpers import run_ray_tests_in_a_child

pytest.importorskip("ray")


PASSED = {"tests/encode/test_ray_engine.py": 5,
          "tests/encode/test_parts_equal_single.py::test_ray_equals_a_single_process_encode_or_refuses": 1,
          "tests/serve/test_ray_engine.py": 2}
"""How many Ray tests of each file pass in the child."""


@pytest.mark.slow
def test_the_ray_tests_pass_in_a_child_pytest():
    run_ray_tests_in_a_child(PASSED)

"""The Ray tests (``@in_ray_child``) pass in one child pytest of their own: a Ray driver changes its process,
so none runs in the suite's processes."""
from __future__ import annotations

import pytest

from tests.helpers import run_ray_tests_in_a_child

pytest.importorskip("ray")


PASSED = {"tests/encode/test_ray_engine.py": 5,
          "tests/encode/test_parts_equal_single.py::test_ray_equals_a_single_process_encode_or_refuses": 1,
          "tests/serve/test_ray_engine.py": 2}
"""Every test marked ``@in_ray_child``: how many of each file pass in the child."""


@pytest.mark.slow
def test_the_ray_tests_pass_in_a_child_pytest(tmp_path):
    run_ray_tests_in_a_child(PASSED, tmp_path / "junit.xml")

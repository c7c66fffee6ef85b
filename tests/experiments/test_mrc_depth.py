"""experiments.mrc_depth: the depth a run needs for MRC@k, on a hand-checkable case."""
from __future__ import annotations

import numpy as np

from experiments.mrc_depth import needed_depth


def test_needed_depth_by_hand():
    # q0 ranks d0 d1 d2 d3; q1 ranks d3 d2 d1 d0; q2 has no translation
    scores = np.array([[4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 1.0, 1.0]])
    pa, pb = np.array([0, 1]), np.array([1, 0])
    id_rank = np.arange(4)
    # k=1: q1's top 1 (d3) is 4th for q0, and q0's top 1 (d0) 4th for q1
    assert needed_depth(scores, pa, pb, 1, id_rank).tolist() == [4, 4, 0]
    scores[1] = [1.0, 5.0, 3.0, 4.0]  # q1 ranks d1 d3 d2 d0: its top 2 {d1, d3} are 2nd and 4th for q0
    assert needed_depth(scores, pa, pb, 2, id_rank).tolist() == [4, 4, 0]
    assert needed_depth(scores, pa, pb, 3, id_rank).tolist() == [4, 4, 0]
    scores[1] = [4.0, 3.0, 1.0, 2.0]  # the same top 2 as q0: a run of depth 2 holds the union
    assert needed_depth(scores, pa, pb, 2, id_rank).tolist() == [2, 2, 0]

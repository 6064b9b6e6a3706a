r"""The two leakage models of the paper's Section III-C, as printed (the vectors are :math:`P_X`).

Used by the Part II chapters, the tests and the benchmarks, so that the numbers are typed once.
"""

from __future__ import annotations

from .model import LeakageModel

__all__ = ["EXAMPLES", "MEDICAL", "SECOND"]

#: The "medical model" of Fig. 2: :math:`P_X=[0.2,0.3,0.5]^T` and its :math:`P_{X|Y}`.
MEDICAL = LeakageModel.from_leakage([[0.85, 0.10, 0.15], [0.10, 0.80, 0.15], [0.05, 0.10, 0.70]], p_x=[0.2, 0.3, 0.5])
#: The example of Fig. 3 (the sweep over orders): :math:`P_X=[0.25,0.35,0.40]^T`.
SECOND = LeakageModel.from_leakage([[0.80, 0.15, 0.10], [0.15, 0.70, 0.20], [0.05, 0.15, 0.70]], p_x=[0.25, 0.35, 0.40])
#: Both, by name.
EXAMPLES = {"medical": MEDICAL, "second": SECOND}

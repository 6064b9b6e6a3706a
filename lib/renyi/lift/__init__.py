r"""Mechanism design under a bounded α-lift with χ²-utility (Zamani, Zarrabian, Sadeghi, Skoglund, 2026).

Private :math:`X` and useful :math:`Y` have a joint law with column-stochastic
leakage matrix :math:`A=P_{X|Y}`; a channel :math:`P_{U|Y}` releases :math:`U`
(so :math:`X-Y-U`).  The design problem (3) is

.. math::

    V_{\chi^2}(\epsilon,\alpha)=\sup_{P_{U|Y}}\ \chi^2(Y;U)
    \quad\text{s.t.}\quad \mathcal L^\alpha(X\to u)\le e^\epsilon\ \ \forall u .

One module per step of the paper:

* :mod:`~renyi.lift.model` — :class:`~renyi.lift.model.LeakageModel` (:math:`P_Y=A^{-1}P_X`,
  :math:`W`, :math:`\sigma_{\max}`, :math:`v^\star` of Lemma 2, :math:`\kappa_\star`,
  :math:`d^\star`, :math:`r^\star_Y`, :math:`r^\star_{\rm val}`) and
  :class:`~renyi.lift.model.GeneralLeakageModel` for singular or non-square :math:`A`;
* :mod:`~renyi.lift.certificate` — Theorem 1 (:func:`~renyi.lift.certificate.certificate`, with the
  admissibility conditions (32)/(34) printed in the paper), :func:`~renyi.lift.certificate.epsilon_max`,
  Corollary 1 and the Rényi transfer;
* :mod:`~renyi.lift.channels` — :class:`~renyi.lift.channels.LiftMechanism`, χ²-information and the
  posterior ↔ channel maps (the orientation convention is stated there);
* :mod:`~renyi.lift.designs` — (22)–(23), Lemma 3, the two-scale mechanism
  (ours) and Proposition 4;
* :mod:`~renyi.lift.optimum` — :func:`~renyi.lift.optimum.global_optimum` (Theorem 2, computed) with
  a certified lower and upper bound: its linear program (``lp``), the conical and box branch
  and bounds (``cones``, ``boxes``), local searches (``candidates``), the phases (``search``),
  the reported bracket (``bracket``) and the search controls (``settings``);
* :mod:`~renyi.lift.examples` — the paper's worked examples (:data:`EXAMPLES`);
* ``renyi.lift._numerics`` and ``renyi.lift._exact`` — the named tolerances, the one
  bisection, and the decimal checks of a channel's lifts (private helpers of this package).

Reconstructions
---------------
The paper's text as we have it lacks several statements; these are our
reconstructions, each consistent with every fragment we have (see the Part II
chapters):

* :math:`\bar\delta_\epsilon=\sqrt{(e^{\alpha\epsilon/(\alpha-1)}-1)/\min_xP_X(x)}`
  for :math:`\alpha\ge2` (reproduces the paper's 0.3902); for
  :math:`1<\alpha<2` the formula
  :math:`\sqrt{b_\epsilon/(A_\alpha p_{\min}^{3-\alpha})}` is a **guess**;
* :math:`r_+`, :math:`V_+`, :math:`G_+` and :math:`E_\rho`;
* the common scale :math:`t_\epsilon` of Lemma 3.
"""

from .certificate import (
    Certificate,
    certificate,
    corollary1_value,
    epsilon_max,
    renyi_budget_max,
    renyi_certificate,
    taylor_constants,
    taylor_remainder,
)
from .channels import (
    LiftMechanism,
    channel_from_posteriors,
    chi2_information,
    mutual_information,
    posteriors_from_channel,
)
from .designs import analytic_mechanism, asymmetric_mechanism, directional_mechanism, null_space_mechanism
from .examples import EXAMPLES
from .model import GeneralLeakageModel, LeakageModel
from .optimum import CertifiedOptimum, SearchSettings, global_optimum

__all__ = [
    "LeakageModel",
    "GeneralLeakageModel",
    "Certificate",
    "LiftMechanism",
    "CertifiedOptimum",
    "SearchSettings",
    "taylor_constants",
    "taylor_remainder",
    "certificate",
    "epsilon_max",
    "renyi_budget_max",
    "renyi_certificate",
    "analytic_mechanism",
    "directional_mechanism",
    "asymmetric_mechanism",
    "global_optimum",
    "null_space_mechanism",
    "chi2_information",
    "channel_from_posteriors",
    "posteriors_from_channel",
    "corollary1_value",
    "mutual_information",
    "EXAMPLES",
]

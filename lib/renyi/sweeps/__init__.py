r"""The Part I simulation sweeps: definitions, the seeded runner, the shipped data and third-party audits.

* :mod:`~renyi.sweeps.definitions`: the sweeps (:data:`SWEEPS`), their seeds and columns;
* :mod:`~renyi.sweeps.tasks`: their tasks (:class:`Task`) and the rows one task computes;
* :mod:`~renyi.sweeps.summaries`: what the chapters read from them
  (:func:`~renyi.sweeps.summaries.summarize`, :func:`~renyi.sweeps.summaries.refutation_rates`);
* :mod:`~renyi.sweeps.run`: the seeded, resumable runner behind ``python -m renyi.sweeps``
  and ``make data``, and :func:`load_sweep`, which the chapters call;
* :mod:`~renyi.sweeps.datafiles`: bit-exact CSV, atomic writes and the manifest;
* :mod:`~renyi.sweeps.libraries`: audits of diffprivlib and OpenDP (an optional extra;
  imported only on request), configured in :mod:`~renyi.sweeps.library_configs`, with
  :mod:`~renyi.sweeps.library_finite_sample` for the finite-sample bound on their discrete
  mechanisms;
* :mod:`~renyi.sweeps.discrete_laws`: the discrete Section IV laws simulated from cell
  counts; :mod:`~renyi.sweeps.vector_laws` and :mod:`~renyi.sweeps.vector_sufficient`: the
  vector-outputs studies' mechanisms, exact divergences and sufficient-statistics shortcut.

This package's namespace is the public face; the submodules hold the details.
"""

from .datafiles import ManifestError, read_rows
from .definitions import FIELDS, QUICK, ROOT_SEED, SWEEPS
from .run import ShippedDataError, load_sweep, run_sweeps
from .summaries import refutation_rates, summarize
from .tasks import Task, claimed_curve, run_task, tasks_for

__all__ = [
    "SWEEPS",
    "QUICK",
    "ROOT_SEED",
    "FIELDS",
    "Task",
    "tasks_for",
    "run_task",
    "summarize",
    "refutation_rates",
    "claimed_curve",
    "load_sweep",
    "read_rows",
    "run_sweeps",
    "ShippedDataError",
    "ManifestError",
]

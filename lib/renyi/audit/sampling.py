r"""Auditing a mechanism: draw its outputs on two adjacent databases, then bound.

:func:`audit` draws both samples in memory (one call per sample) and hands them to
:func:`~renyi.audit.pipeline.rdp_lower_bound`; with ``workers`` (or a Dask ``scheduler``) it
draws them in tasks, each output once, and bounds the fit merged from their counts
(:mod:`renyi.audit.parallel`).
"""

from __future__ import annotations

import numpy as np

from .._validation import as_generator, as_int, as_positive_scalar, as_workers
from .black_box import checked_outputs, load_black_box

# The estimator (pipeline, projection: scipy) is imported where it is used: a script that
# imports audit at its top re-runs that import in every spawned worker process, which then
# starts in a fraction of a second instead of loading scipy for nothing.

__all__ = ["audit"]


def audit(
    mechanism,
    database,
    neighbour,
    n,
    orders,
    *,
    rng=None,
    workers=None,
    scheduler=None,
    chunk=None,
    pilot=None,
    progress=None,
    task_timeout=None,
    isolate=False,
    **estimator_options,
):
    r"""Sample a mechanism on two adjacent databases and bound its :math:`\varepsilon(\lambda)` from below.

    Parameters
    ----------
    mechanism : Mechanism, str or callable
        An entry of :data:`renyi.mechanisms.MECHANISMS` (or its key), any black-box
        callable ``f(database, n, rng) -> outputs``, or its importable name
        ``"package.module:function"``.
    database, neighbour : object
        The adjacent pair :math:`(x, x')`, passed to the sampler unchanged: an
        array for the built-in mechanisms (e.g.
        :data:`renyi.mechanisms.ADJACENT_PAIR`), any object (a list of records,
        a data frame, a scalar) for your own callable.
    n : int or (int, int)
        Samples per database (or ``(n_p, n_q)``).
    orders : float or sequence of float
    rng : numpy.random.Generator or None
        Two independent child streams are spawned from it, one per database,
        and passed to the sampler; the built-in mechanisms require it.
        ``None`` (allowed for callables only) passes ``None``: the black box
        draws its own randomness, and the audit is then only as reproducible
        as the black box is.
    workers : int, optional
        Draw the outputs in tasks on this many processes (``-1``: every core; ``1``: the
        same tasks in this process), each output once, memory independent of ``n``
        (:mod:`renyi.audit.parallel`).  A pilot of each sample fixes the grid
        (:mod:`renyi.audit.mergeable` says what that changes); the bound depends on the
        seed, never on the number of workers.  The mechanism must be picklable, and a
        script that passes ``workers > 1`` must run under ``if __name__ == "__main__":``.
        ``None`` (default): one draw per sample, in memory.
    scheduler : str or dask.distributed.Client, optional
        Run the same tasks on a Dask cluster instead (the address of its scheduler, e.g.
        ``"tcp://host:8786"``, or a client); the workers need ``renyi`` and the black box's
        package.  The bound equals that of ``workers=1`` with the same ``rng``.
    chunk : int, optional
        Most outputs per task (with ``workers`` only); default about 32 tasks per sample,
        between 4,096 and 1,000,000 outputs each (:func:`~renyi.audit.parallel.default_chunk`),
        chosen from ``n`` alone so that the bound does not depend on the number of workers.
    pilot : int, optional
        Pilot outputs per sample: with ``workers``, the first tasks of each sample, whose
        outputs fix the kind and the grid (default 262,144; at most ``n``), and for vector
        outputs with a learned ``projection`` also the map (a direction or a log ratio; with
        ``"auto"``, chosen on them: :func:`~renyi.audit.reduction.learn_map`), which holds them
        out of the bound (default: at most half the smaller sample), or with
        ``projection="grid"`` (:math:`d=2` or 3) the whitening and the grid, counted in the
        bound; in one process with a learned ``projection``, extra outputs that learn the map,
        so that every output of the main samples is bounded (no ``split``).  With ``"auto"``
        at :math:`d=2` or 3 the pilot may choose the grid instead: every output of the main
        samples (in tasks: every output but the pilot's) is then estimated on it.
    progress : bool, optional
        A progress bar on standard error while tasks run (default: when it is a terminal).
    task_timeout : float, optional
        Seconds the audit waits for one task (pilots included): a black box that hangs stops
        the audit with one line naming the task, and no worker is left running.  With
        ``workers=1`` the tasks then run in one worker process, so that a hung one can be
        stopped.
    isolate : bool, default False
        With ``workers=1``, draw the tasks in one worker process instead of this one, so that
        a black box that ends its process (``os._exit``, a crash in C code) or raises
        ``KeyboardInterrupt`` fails as one :class:`~renyi.audit.engines.TaskError` instead of
        ending this process (the CLI's ``audit-mechanism`` always does).  The bound is the same.
    **estimator_options
        Passed to :func:`rdp_lower_bound` (``alpha``, ``discrete``,
        ``bandwidth``, ``floor``, ``beta``, ``bias_correction``, ``direction``,
        ``tails``, ``method``, ``projection``, ``split``).  A mechanism's ``discrete`` attribute is used when
        ``discrete`` is not given; otherwise the kind is inferred from the outputs (integers,
        booleans or rows: discrete; real values: continuous), with ``workers`` from the pilots.

    Returns
    -------
    LowerBound or list of LowerBound

    Raises
    ------
    renyi.audit.engines.TaskError
        With ``workers`` or ``scheduler``: a task failed (the black box raised, exited, hung
        past ``task_timeout``, returned the wrong outputs, or its worker died); one line that
        names the task and carries the black box's message.

    References
    ----------
    :cite:t:`kutta2024lower`, Section III, eq. (16).

    Examples
    --------
    The Gaussian mechanism of Section IV at 20,000 outputs per side:

    >>> import numpy as np
    >>> from renyi.audit import audit
    >>> from renyi.mechanisms import ADJACENT_PAIR, MECHANISMS
    >>> gauss = MECHANISMS["gaussian"]
    >>> x, x_prime = ADJACENT_PAIR
    >>> bound = audit(gauss, x, x_prime, 20_000, 2.0, rng=np.random.default_rng(1))
    >>> bool(0 < bound.lower <= gauss.target(2.0))
    True
    """
    if isinstance(mechanism, str) and ":" in mechanism:
        mechanism = load_black_box(mechanism)
    if isinstance(mechanism, str):
        from ..mechanisms import MECHANISMS  # (scipy: loaded only when a built-in is named)

        if mechanism not in MECHANISMS:
            raise ValueError(f"unknown mechanism {mechanism!r}; choose one of {', '.join(MECHANISMS)}")
        mechanism = MECHANISMS[mechanism]
    sampler = getattr(mechanism, "sample", mechanism)
    if not callable(sampler):
        raise TypeError("mechanism must be a MECHANISMS entry, its name, or a callable f(database, n, rng)")
    builtin = sampler is not mechanism
    if rng is None and builtin:
        raise TypeError(
            "rng must be a numpy.random.Generator for the built-in mechanisms, e.g. numpy.random.default_rng(seed)"
        )
    rng = as_generator(rng, allow_none=True, why_none="for a black box that draws its own randomness")
    if isinstance(n, (tuple, list)):
        if len(n) != 2:
            raise ValueError(f"n must be an int or a pair (n_p, n_q), got {n!r}")
        n_p, n_q = n
    else:
        n_p = n_q = n
    for name, value in (("n", n_p), ("n", n_q)):
        as_int(value, name, minimum=2)
    if "discrete" not in estimator_options and hasattr(mechanism, "discrete"):
        estimator_options["discrete"] = bool(mechanism.discrete)
    if scheduler is not None and workers is None:
        workers = 1  # (the cluster's workers draw; this process only merges)
    if isolate and workers is None:
        raise ValueError("isolate applies to outputs drawn in tasks: pass workers=1 (or more)")
    if workers is not None:
        return _audit_in_tasks(
            sampler,
            database,
            neighbour,
            (int(n_p), int(n_q)),
            orders,
            rng,
            workers,
            dict(
                chunk=chunk,
                pilot=pilot,
                progress=progress,
                scheduler=scheduler,
                task_timeout=task_timeout,
                isolate=bool(isolate),
            ),
            estimator_options,
        )
    rng_p, rng_q = rng.spawn(2) if rng is not None else (None, None)
    samples_p = _drawn(sampler(database, int(n_p), rng_p), int(n_p), "database")
    samples_q = _drawn(sampler(neighbour, int(n_q), rng_q), int(n_q), "neighbour")
    if pilot is not None:
        return _with_pilot_direction(
            sampler, (database, neighbour), (samples_p, samples_q), orders, rng, pilot, estimator_options
        )
    from .pipeline import rdp_lower_bound

    return rdp_lower_bound(samples_p, samples_q, orders, **estimator_options)


def _with_pilot_direction(sampler, pair, samples, orders, rng, pilot, options):
    """Learn a projection on fresh pilot outputs, then bound every output of the main samples."""
    kind = options.get("projection")
    if not isinstance(kind, str):
        raise ValueError(
            "pilot applies to workers (the grid) or to a learned projection (projection='auto', "
            "'likelihood-ratio', 'mean-difference' or 'whitened'), not to this audit"
        )
    if options.get("split") is not None:
        raise ValueError("with a pilot the direction is learned on the pilot: drop split")
    pilot = as_int(pilot, "pilot", minimum=2)
    rng_p, rng_q = rng.spawn(2) if rng is not None else (None, None)
    held = [
        _drawn(sampler(db, pilot, r), pilot, which)
        for db, r, which in zip(pair, (rng_p, rng_q), ("database", "neighbour"))
    ]
    from .pipeline import rdp_lower_bound, with_projection
    from .reduction import learn_map

    learned = learn_map(*held, kind, rng=rng, grid=True, **_scored_at(options, orders))
    # (where the pilot chose the grid, every output of the samples is estimated on it, no map)
    route = "grid" if learned.kind == "grid" else learned.map
    bounds = rdp_lower_bound(*samples, orders, **{**options, "projection": route})
    record = (bounds[0] if isinstance(bounds, list) else bounds).projection
    info = learned.projection(
        held[0].shape[1], (pilot, pilot), record["signal_share"], f"{learned.kind} (pilot)", record["bandwidths"]
    )
    return with_projection(bounds, info)


def _scored_at(options, orders) -> dict:
    """Where a learned projection's candidates are scored: the bound's orders, level and direction."""
    return {k: options[k] for k in ("alpha", "direction") if k in options} | {"orders": orders}


def _drawn(outputs, n: int, which: str):
    """The black box's outputs, refused unless there is one per requested draw."""
    return checked_outputs(outputs, n, f"the {which}", finite=False)


def _audit_in_tasks(sampler, database, neighbour, sizes, orders, rng, workers, controls, options):
    """:func:`audit` with ``workers``: the fit from counts drawn in tasks, then the bounds."""
    from .parallel import audit_in_tasks

    workers = as_workers(workers)
    if rng is None:
        raise TypeError("workers needs rng (a numpy.random.Generator): each task's stream is spawned from it")
    method = options.pop("method", "delta")
    if method not in ("delta", "finite-sample"):
        raise ValueError(f"method must be 'delta' or 'finite-sample', got {method!r}")
    support = options.pop("support", None)
    if support is not None and method != "finite-sample":
        raise ValueError("support applies to method='finite-sample'")
    discrete = options.pop("discrete", None)
    if discrete is not None and not isinstance(discrete, (bool, np.bool_)):
        raise TypeError(f"discrete must be True, False or None, got {discrete!r}")
    if options.pop("tails", "absolute") != "absolute":
        raise ValueError("with workers, only tails='absolute' (the binned KDE) is available")
    bandwidth = options.pop("bandwidth", None)
    if bandwidth is not None and discrete:
        raise ValueError("bandwidth applies to continuous outputs only; drop it or set discrete=False")
    chunk = None if controls["chunk"] is None else as_int(controls["chunk"], "chunk", minimum=1)
    projection, learned = _task_projection(options, bandwidth, discrete)
    held_out = learned or (method == "finite-sample" and (support is None or np.unique(support).size > 2))
    pilot = _pilot_size(controls["pilot"], sizes, held_out, method)
    timeout = controls["task_timeout"]
    timeout = None if timeout is None else as_positive_scalar(timeout, "task_timeout")
    fit, projected = audit_in_tasks(
        sampler,
        database,
        neighbour,
        *sizes,
        rng=rng,
        discrete=discrete,
        workers=workers,
        chunk=chunk,
        pilot=pilot,
        bandwidth=None if bandwidth is None else as_positive_scalar(bandwidth, "bandwidth"),
        progress=controls["progress"],
        scheduler=controls["scheduler"],
        task_timeout=timeout,
        isolate=controls["isolate"],
        projection=projection,
        method=method,
        support=support,
        scored_at=_scored_at(options, orders),
    )
    if method == "finite-sample":
        return _finite_sample_bounds(fit, orders, options, sizes)
    from .density_fit import bounds_from_fit
    from .pipeline import with_projection

    bounds = bounds_from_fit(fit, orders, **options)
    return bounds if projected is None else with_projection(bounds, projected)


def _task_projection(options, bandwidth, discrete):
    """The projection of an audit in tasks (its former name read) and whether the pilot learns it."""
    from .projection import renamed

    projection = renamed(options.pop("projection", None), stacklevel=4)
    grid = isinstance(projection, str) and projection == "grid"
    if grid and bandwidth is not None:
        raise ValueError("projection='grid' chooses one bandwidth per whitened axis (Scott's rate); drop bandwidth")
    if options.pop("split", None) is not None:
        raise ValueError("with workers a learned direction is held out on the pilot: drop split (pilot sets its size)")
    if projection is not None and discrete:
        raise ValueError("projection reduces real vector outputs; it does not apply with discrete=True")
    return projection, isinstance(projection, str) and not grid


def _pilot_size(pilot, sizes, held_out, method) -> int:
    """Outputs per side of the pilot: given, or (held out of the bound) a share of the smaller n."""
    from .bandwidth import SCALE_SAMPLE
    from .finite_sample import DEFAULT_SPLIT

    if pilot is None:  # a held-out pilot: at most half the smaller sample (the cells' share: a fifth)
        share = DEFAULT_SPLIT if method == "finite-sample" else 0.5
        pilot = max(2, min(SCALE_SAMPLE, round(share * min(sizes)))) if held_out else SCALE_SAMPLE
    pilot = as_int(pilot, "pilot", minimum=2)
    if held_out and pilot >= min(sizes):
        raise ValueError(f"the pilot is held out of the bound here: pilot ({pilot:,}) must be below n")
    return pilot


def _finite_sample_bounds(grouping, orders, options, sizes):
    """The finite-sample bounds from the cells counted in tasks (the options it takes, checked)."""
    from .finite_sample import bounds_from_grouping, checked_settings

    direction = options.pop("direction", "both")
    listed, scalar, alpha = checked_settings(orders, options.pop("alpha", 0.05), direction)
    unused = sorted(k for k, v in options.items() if v is not None)
    if unused:
        raise ValueError(f"method='finite-sample' takes no {', '.join(unused)}")
    bounds = bounds_from_grouping(grouping, listed, alpha=alpha, direction=direction, sizes=sizes)
    return bounds[0] if scalar else bounds

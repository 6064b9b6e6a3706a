"""renyi.audit.streaming: the chunked fit equals the in-memory fit, in memory independent of n."""

import tracemalloc

import numpy as np
import pytest
from renyi.audit import bounds_from_fit, fit_densities
from renyi.audit.streaming import array_chunks, fit_densities_chunked


def test_chunked_fit_equals_in_memory_fit(tmp_path):
    rng = np.random.default_rng(0)
    a, b = rng.laplace(1, 5, 600_000), rng.laplace(0, 5, 600_011)
    np.save(tmp_path / "b.npy", b)
    mapped = np.load(tmp_path / "b.npy", mmap_mode="r")
    whole = fit_densities(a, b)
    chunked = fit_densities_chunked(array_chunks(a, 99_991), mapped)
    assert (chunked.bandwidth, chunked.cells, chunked.dx) == (whole.bandwidth, whole.cells, whole.dx)
    np.testing.assert_allclose(chunked.p, whole.p, rtol=0, atol=1e-14 * whole.p.max())
    for u, v in zip(bounds_from_fit(chunked, [2, 5]), bounds_from_fit(whole, [2, 5])):
        assert u.lower == pytest.approx(v.lower, rel=1e-10)


@pytest.mark.slow
def test_memory_does_not_grow_with_n():
    def source(n, seed, chunk=500_000):
        def chunks():
            rng = np.random.default_rng(seed)
            for start in range(0, n, chunk):
                yield rng.normal(0, 1, min(chunk, n - start))

        return chunks

    peaks = []
    for n in (2_000_000, 8_000_000):
        tracemalloc.start()
        fit_densities_chunked(source(n, 1), source(n, 2))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 1.5 * peaks[0]  # four times the data, about the same memory
    assert peaks[1] < 8_000_000 * 8 / 4  # far below one copy of the data


@pytest.mark.parametrize(
    "bad,fragment",
    [
        (lambda: iter([np.array([1.0, np.nan])]), "NaN"),
        (lambda: iter([np.ones((2, 2))]), "1-D"),
        (lambda: iter([np.array(["a"])]), "real numbers"),
        (lambda: iter([np.array([1.0])]), "two distinct values"),
    ],
)
def test_bad_chunks_are_named(bad, fragment):
    with pytest.raises(ValueError, match=fragment):
        fit_densities_chunked(bad, np.random.default_rng(0).normal(size=100))


def test_bad_sources_are_refused():
    with pytest.raises(TypeError, match="callable"):
        fit_densities_chunked([1.0, 2.0], np.arange(10.0))
    with pytest.raises(ValueError, match="chunk"):
        array_chunks(np.arange(10.0), 0)

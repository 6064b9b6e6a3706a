"""Print the SIMD extensions numpy dispatches to on this CPU, beyond its baseline.

``make nbval-simd`` passes them to ``NPY_DISABLE_CPU_FEATURES`` so that the
chapters run on numpy's baseline code path, the one an older CPU takes.  Only
features numpy reports as *found* and *dispatchable* are printed: numpy refuses
a baseline feature at import, and prints nothing here on a CPU that has none
beyond its baseline.
"""

from numpy._core import _multiarray_umath as umath

found = umath.__cpu_features__
baseline = set(umath.__cpu_baseline__)
print(" ".join(f for f in umath.__cpu_dispatch__ if found.get(f) and f not in baseline))

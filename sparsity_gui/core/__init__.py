"""Numerics, engines and result files of both models; never Qt (docs/architecture.md).

numba's cache folder is chosen here, before any module of the package imports numba."""

from sparsity_gui.core.numba_env import configure_numba_cache

configure_numba_cache()

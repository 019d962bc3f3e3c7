import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Numba compiles on first use; property tests must not count that against a deadline.
settings.register_profile("seqcompare", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("seqcompare")

DATA = os.path.join(os.path.dirname(__file__), os.pardir, "data")


def has_gpu() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU with CuPy on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


@pytest.fixture(scope="session")
def sarscov2():
    from seqcompare.io.fasta import read_alignment

    return read_alignment(os.path.join(DATA, "sarscov2_338.fasta.gz"))


def random_alignment(rng, n, m, alphabet=b"ACGTN-acgtRYKMSWn"):
    """Random related sequences over ``alphabet`` (a root plus per-sequence noise)."""
    symbols = np.frombuffer(alphabet, dtype=np.uint8)
    root = symbols[rng.integers(0, len(symbols), m)]
    rows = np.repeat(root[None, :], n, axis=0)
    noise = rng.random((n, m)) < 0.3
    rows[noise] = symbols[rng.integers(0, len(symbols), int(noise.sum()))]
    return rows

"""Exact virus-signature scanning of sequencing samples (``seqcompare scan``).

The constants live here, apart from the kernels, so that the command line can offer them without loading Numba.
"""

REPORTS = ("first", "best", "all")
METHODS = ("auto", "index", "reference")
DEFAULT_K = 12
MAX_K = 13  # the index's bitmap has 4**k bits

"""CoMet's Custom Correlation Coefficient (CCC) and DUO between genotype vectors: 2-way and 3-way, exact.

:func:`seqcompare.ccc` (``api.ccc``) is the entry point; ``formulas`` holds the one implementation of the values
that every method shares, ``reference`` the oracle, ``cpu`` the BLAS path (the GPU path is
:mod:`seqcompare.gpu.ccc`), ``checksum`` the order-independent checksum and ``analytic`` the closed-form test
problem.
"""

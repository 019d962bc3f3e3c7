"""``seqcompare scan``: which signatures (viral genomes, genes, primers) occur in which sequencing samples,
exactly, with 'N' on either side matching any base.

The package is callable: ``seqcompare.scan(samples, signatures, ...)`` is :func:`.api.scan`.

- :mod:`.api`: :func:`scan`, :func:`prepare_signatures`, :class:`ScanResult`, :func:`coverage`.
- :mod:`.approximate`: occurrences within k mismatches or edits (a pigeonhole filter, then exact verification).
- :mod:`.kmer_coverage`: breadth and depth of the signatures in reads, from k-mer hits.
- :mod:`.work`: the batch work the engine runs on Dask (chunks of samples, the index built once per worker).
- :mod:`.index`: the k-mer index with its exact fallback (CPU kernels); :mod:`.packed`: 3-bit packing.
- :mod:`.reference`: the brute-force oracle.
- :mod:`.gpu`, ``scan.cu`` and :mod:`.gpu_helper` (the command line's forked helper process): the GPU path.
- :mod:`.common`: options and lookup tables (no Numba: the command line's parser and the GPU helper use it).
"""

from __future__ import annotations

from .._callable import command_package

_EXPORTS = {
    "scan": "seqcompare.scan.api:scan",
    "prepare_signatures": "seqcompare.scan.api:prepare_signatures",
    "ScanResult": "seqcompare.scan.api:ScanResult",
    "PreparedSignatures": "seqcompare.scan.api:PreparedSignatures",
    "coverage": "seqcompare.scan.api:coverage",
    "CoverageResult": "seqcompare.scan.kmer_coverage:CoverageResult",
}
__all__, __getattr__ = command_package(__name__, "seqcompare.scan.api:scan", _EXPORTS)

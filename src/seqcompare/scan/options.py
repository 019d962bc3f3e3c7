"""The scan's options and their defaults, without NumPy: the command line's parser reads them before it forks
the GPU helper process, which then starts CUDA while the parent imports NumPy (about 0.2 s on a lent H200's
host, bench/RESULTS.md, session 40)."""

REPORTS = ("first", "best", "all")
METHODS = ("auto", "index", "reference")
DEFAULT_K = 12
# k-mers of --coverage: on the bundled nanopore lambda reads (about 10% errors) 25-mers cover 98% of lambda and
# none of the 81 other viral references; 21-mers cover 99% of lambda and 1.2% of one influenza segment.
DEFAULT_COVERAGE_KMER = 25
MAX_K = 13  # the index's bucket table has 4**k entries

"""Public Hamming / SNP-distance API: matrices, pairs within a distance, k nearest neighbours.

Every function encodes its inputs (:func:`encode_inputs`), makes a :class:`~seqcompare.hamming.work.HammingWork`
and runs it through the all-pairs engine (:func:`seqcompare.allpairs.run`) into a reduction, on the CPU's threads,
every visible GPU, or a Dask cluster (``client``): :func:`run_hamming` is that one path.
"""

from __future__ import annotations

import os

import numpy as np

from .. import validation
from ..allpairs import (
    Duplicates,
    GpuExecutor,
    KnnReduction,
    MatrixReduction,
    PairsReduction,
    ThreadExecutor,
    executor_for_client,
    run,
    run_collapsed,
)
from ..cuda.runtime import resolve_device
from ..errors import InputError
from ..io.fasta import Alignment, read_alignment
from ..io.sequences import letters_matrix
from . import models
from .encoding import ALPHABETS, encode_categorical, sequence_encoding
from .methods import resolve_method
from .work import Encoded, HammingWork, distance_dtype, rows_in_memory

__all__ = ["Encoded", "clusters", "distance_dtype", "duplicates", "encode_inputs", "encode_site_codes",
           "differing_sites", "find_duplicates", "hamming", "hamming_knn", "hamming_pairs", "model_distances", "model_pairs",
           "run_hamming", "run_model"]


def _as_matrix(data, role: str):
    """Classify one input: ``("sequences", uint8 bytes)`` or ``("values", array)``."""
    if isinstance(data, (str, os.PathLike)):
        data = read_alignment(data)
    if isinstance(data, Alignment):
        return "sequences", data.sequences
    if isinstance(data, (list, tuple)) and data and all(isinstance(s, (str, bytes)) for s in data):
        matrix = letters_matrix(data)  # many long ASCII strings: copied by threads from where Python keeps them
        if matrix is not None:
            return "sequences", matrix
        rows = [s.encode("latin-1") if isinstance(s, str) else s for s in data]
        lengths = {len(r) for r in rows}
        if len(lengths) > 1:
            first = len(rows[0])
            bad = next(k for k, r in enumerate(rows) if len(r) != first)
            raise InputError(
                f"{role}: sequence #{bad + 1} has length {len(rows[bad])} but sequence #1 has length {first}"
            )
        matrix = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), lengths.pop())
        return "sequences", matrix
    array = np.asarray(data)
    if array.dtype.kind in "SU" and array.ndim == 2 and array.dtype.itemsize in (1, 4):
        if array.dtype.kind == "U":
            array = np.char.encode(array, "latin-1")
        return "sequences", np.ascontiguousarray(array).view(np.uint8).reshape(array.shape)
    if array.dtype.kind in "SU" and array.ndim == 1:
        return _as_matrix([str(s) if array.dtype.kind == "U" else bytes(s) for s in array], role)
    if array.ndim != 2:
        raise InputError(f"{role}: expected a 2-D array (items x sites) or a list of sequences, got shape {array.shape}")
    return "values", array


def encode_inputs(X, Y=None, *, alphabet="acgt", keep_case=False, missing=None) -> Encoded:
    """Encode ``X`` (and ``Y``) into site codes of one shared code space.

    Sequences (an :class:`~seqcompare.io.fasta.Alignment`, a FASTA path, a list of equal-length strings, or
    a 2-D character array) use the sequence ``alphabet``; any other 2-D array is categorical data in which
    every distinct value is a category.
    """
    if alphabet not in ALPHABETS:
        raise ValueError(f"alphabet must be one of {', '.join(ALPHABETS)}; got {alphabet!r}")
    kind_x, mx = _as_matrix(X, "X")
    parts = [mx]
    if Y is not None:
        kind_y, my = _as_matrix(Y, "Y")
        if kind_x != kind_y:
            raise InputError("X and Y must both be sequences or both be value arrays")
        if my.shape[1] != mx.shape[1]:
            raise InputError(f"X has {mx.shape[1]} sites but Y has {my.shape[1]}; they must be equally long")
        parts.append(my)
    if kind_x == "sequences":
        if missing is None:
            missing = ""
        elif not isinstance(missing, (str, bytes)):
            missing = "".join(missing)
        table, space = sequence_encoding(parts, alphabet, keep_case=keep_case, missing=missing)
        return Encoded(parts[0], parts[1] if Y is not None else None, space, table)
    codes, space = encode_categorical(parts, missing=missing)
    return Encoded(codes[0], codes[1] if Y is not None else None, space)


def _executor(threads, tile_size, device: str, client):
    """``(executor, device, tile_size)`` of a run: a Dask ``client``'s (its workers' device; the tile is then its
    task tile, so the work plans its own), else every visible GPU or the CPU's threads."""
    threads = validation.threads(threads)
    tile_size = validation.optional_integer(tile_size, "tile_size", minimum=1)
    if client is not None:
        executor = executor_for_client(client, device=device, tile_size=tile_size)
        return executor, executor.device, None
    device = resolve_device(device)
    return (GpuExecutor() if device == "cuda" else ThreadExecutor(threads)), device, tile_size


def find_duplicates(encoded):
    """:class:`~seqcompare.allpairs.Duplicates` of the left rows of ``encoded`` (an :class:`Encoded` or a
    :class:`~seqcompare.hamming.pairstats.SiteCodes`) and of the right rows (None for a symmetric problem):
    rows identical once encoded, so identical against every other row."""
    table = getattr(encoded, "table", None)
    left = Duplicates.of_rows(encoded.left, table)
    right = None if encoded.right is None else Duplicates.of_rows(encoded.right, table)
    return left, right


def _representatives(encoded, left, right):
    """``encoded`` restricted to the representatives' rows (same class, same code space)."""
    rows = encoded.left[left.representatives]
    columns = None if right is None else encoded.right[right.representatives]
    if isinstance(encoded, Encoded):
        return Encoded(rows, columns, encoded.space, encoded.table, form=encoded.form, sites=encoded.sites)
    return type(encoded)(rows, columns)


def _run(work_of, encoded, reduction, executor, progress, what, collapse):
    """The engine on ``work_of(encoded)``, or, with ``collapse``, on its distinct rows then expanded."""
    if not collapse:
        return run(work_of(encoded), reduction, executor, progress, what)
    left, right = find_duplicates(encoded)
    work = work_of(_representatives(encoded, left, right))
    return run_collapsed(work, reduction, executor, left, right, progress, what)


def run_hamming(encoded: Encoded, reduction, *, method="auto", cap=None, threads=None, tile_size=None,
                progress=False, device="cpu", gpu_packer="auto", client=None, collapse=False):  # fmt: skip
    """All pairs of ``encoded`` through the engine into ``reduction``; returns what it finishes with.

    The layer every public function and the command line share. ``cap`` limits every distance to
    ``min(distance, cap)`` and lets kernels stop counting a pair early; ``gpu_packer`` chooses how GPU operands
    are built (:mod:`seqcompare.hamming.gpu`). With a Dask ``client`` the tiles run on its cluster
    (``tile_size`` is then the task tile); ``device`` is then the workers' device. ``progress`` is a bool or a
    reporter factory (:mod:`seqcompare.progress`). ``collapse`` computes each distinct row once
    (:func:`~seqcompare.allpairs.run_collapsed`); the result is the same.
    """
    cap = validation.optional_integer(cap, "max_count", minimum=0)
    executor, device, tile_size = _executor(threads, tile_size, device, client)
    if device != "cuda" or client is not None or collapse:
        encoded = rows_in_memory(encoded)  # only a GPU here reads rows where they lie in a file

    def work_of(rows):
        return HammingWork(rows, method=method, device=device, cap=cap, tile_size=tile_size, packer=gpu_packer)

    return _run(work_of, encoded, reduction, executor, progress, "hamming", collapse)


def hamming(X, Y=None, *, method="auto", alphabet="acgt", keep_case=False, missing=None, max_count=None,
            threads=None, tile_size=None, out=None, progress=False, device="cpu", client=None,
            collapse=False):  # fmt: skip
    """All-pairs Hamming / SNP distances.

    Parameters
    ----------
    X : Alignment, path, list of str, or array_like, shape (n, m)
        Sequences (FASTA path, :class:`~seqcompare.io.fasta.Alignment`, equal-length strings, 2-D character
        array) or any 2-D array of categorical values (integers, floats, strings per cell).
    Y : same kinds as X, shape (p, m), optional
        Right-hand items; the result is then the rectangular ``X`` x ``Y`` matrix.
    method : {"auto", "vector", "matrix", "tiled", "bitpack", "bitmma"}
        Algorithm; all give identical results. ``auto`` picks the fastest for the device. On a GPU:
        ``bitmma`` (1-bit tensor cores), ``matrix`` (int8 tensor cores, cuBLAS), ``bitpack`` (CUDA cores).
    alphabet : {"acgt", "all", "iupac"}
        Sequence semantics (ignored for value arrays). ``"acgt"`` is snp-dists': a site counts only when
        both characters are A, C, G or T (case-insensitive) and differ. ``"all"`` counts every differing
        character. ``"iupac"`` treats ambiguity codes as base sets (A vs R = 0, A vs Y = 1).
    keep_case : bool
        Compare case-sensitively (snp-dists ``-k``).
    missing : str or sequence, optional
        Characters (sequences) or values (arrays) treated as missing: sites holding them never count.
        Float NaN is always missing.
    max_count : int, optional
        Report ``min(distance, max_count)``; kernels stop counting a pair once it reaches the cap.
    threads : int, optional
        Worker threads (default: all available cores).
    tile_size : int, optional
        Tile edge; the result does not depend on it.
    out : str or path-like, optional
        Write the matrix to this ``.npy`` file tile by tile (never held in memory) and return a read-only
        memmap of it.
    progress : bool or callable
        Show a progress bar on stderr (or report through a callable, see :mod:`seqcompare.progress`).
    device : {"cpu", "cuda", "auto"}
        Where to compute: ``"cuda"`` uses every visible NVIDIA GPU (limit them with ``CUDA_VISIBLE_DEVICES``)
        and needs the ``[cuda]`` extra; ``"auto"`` picks a GPU when one is usable.
    client : dask.distributed.Client, optional
        Run the tiles on this Dask cluster (:mod:`seqcompare.distributed`; ``device`` is the workers'); ``out``
        must then be a path every worker can write. The result is identical.
    collapse : bool
        Compute each distinct sequence (identical once encoded under ``alphabet``, ``keep_case`` and
        ``missing``) once and expand the result: identical, and faster when many sequences are duplicates.

    Returns
    -------
    ndarray of int32, shape (n, n) or (n, p)
        Symmetric with a zero diagonal when ``Y`` is None.

    Examples
    --------
    >>> import seqcompare
    >>> seqcompare.hamming(["ACGTN", "ACCTA", "TCGT-"])
    array([[0, 1, 1],
           [1, 0, 2],
           [1, 2, 0]], dtype=int32)
    """
    max_count = validation.optional_integer(max_count, "max_count", minimum=0)
    threads = validation.threads(threads)
    encoded = encode_inputs(X, Y, alphabet=alphabet, keep_case=keep_case, missing=missing)
    shape = (encoded.n_left, encoded.n_left if encoded.symmetric else encoded.n_right)
    matrix = MatrixReduction(shape, encoded.symmetric, distance_dtype(encoded.n_sites), path=out)
    try:
        return run_hamming(encoded, matrix, method=method, cap=max_count, threads=threads, tile_size=tile_size,
                           progress=progress, device=device, client=client, collapse=collapse)  # fmt: skip
    finally:
        matrix.abort()  # nothing to do once finished


def hamming_pairs(X, Y=None, *, max_dist, method="auto", alphabet="acgt", keep_case=False, missing=None,
                  threads=None, tile_size=None, progress=False, device="cpu", client=None,
                  collapse=False):  # fmt: skip
    """Pairs within a distance, without ever building the full matrix.

    Parameters
    ----------
    X, Y, method, alphabet, keep_case, missing, threads, tile_size, progress, device, client, collapse
        As for :func:`hamming`.
    max_dist : int
        Report pairs at distance ``<= max_dist``. Kernels stop counting a pair past it.

    Returns
    -------
    i, j, d : ndarray of int64
        Pair indices and distances, sorted by ``(i, j)``. Without ``Y`` each unordered pair appears once,
        with ``i < j``; with ``Y``, ``i`` indexes ``X`` and ``j`` indexes ``Y``.
    """
    max_dist = validation.integer(max_dist, "max_dist", minimum=0)
    threads = validation.threads(threads)
    encoded = encode_inputs(X, Y, alphabet=alphabet, keep_case=keep_case, missing=missing)
    return run_hamming(encoded, PairsReduction(max_dist, encoded.symmetric), method=method, cap=max_dist + 1,
                       threads=threads, tile_size=tile_size, progress=progress, device=device, client=client,
                       collapse=collapse)  # fmt: skip


def hamming_knn(X, Y=None, *, k, method="auto", alphabet="acgt", keep_case=False, missing=None,
                threads=None, tile_size=None, progress=False, device="cpu", client=None):  # fmt: skip
    """The ``k`` nearest neighbours of every item of ``X`` (among ``X`` itself, or among ``Y``).

    Parameters
    ----------
    X, Y, method, alphabet, keep_case, missing, threads, tile_size, progress, device, client
        As for :func:`hamming`.
    k : int
        Neighbours per item; fewer when there are fewer candidates.

    Returns
    -------
    indices, distances : ndarray of int64, shape (n, min(k, candidates))
        Sorted by distance, ties by the smaller index; an item is never its own neighbour.
    """
    k = validation.integer(k, "k", minimum=1)
    threads = validation.threads(threads)
    encoded = encode_inputs(X, Y, alphabet=alphabet, keep_case=keep_case, missing=missing)
    return run_hamming(encoded, KnnReduction(k, encoded.n_left, encoded.n_right), method=method, threads=threads,
                       tile_size=tile_size, progress=progress, device=device, client=client)  # fmt: skip


def encode_site_codes(X, Y, alphabet: str, keep_case: bool, missing: str):
    """:class:`~seqcompare.hamming.pairstats.SiteCodes` of sequence inputs ``X`` (and ``Y``) under ``alphabet``,
    ``"acgt"`` (snp-dists) or ``"tn93"`` (veg/tn93's characters; any other is an error naming its record)."""
    from .pairstats import SiteCodes, site_codes

    sides = []
    for data, role in ((X, "X"), (Y, "Y")):
        if data is None:
            sides.append(None)
            continue
        if isinstance(data, (str, os.PathLike)):
            data = read_alignment(data)
        names, source = (data.names, data.source) if isinstance(data, Alignment) else (None, role)
        kind, matrix = _as_matrix(data, role)
        if kind != "sequences":
            raise InputError(f"{role}: model distances and comparable sites need sequences, not a value array")
        sides.append(site_codes(matrix, alphabet, names=names, source=source, keep_case=keep_case,
                                missing=missing or ""))  # fmt: skip
    if sides[1] is not None and sides[1].shape[1] != sides[0].shape[1]:
        raise InputError(f"X has {sides[0].shape[1]} sites but Y has {sides[1].shape[1]}; they must be equally long")
    return SiteCodes(sides[0], sides[1])


def run_model(codes, reduction, *, model="p", ambiguities="resolve", fraction=1.0, min_overlap=0, with_sites=False,
              threads=None, tile_size=None, progress=False, device="cpu", client=None, collapse=False,
              screen=None):  # fmt: skip
    """All pairs of ``codes`` (:class:`~seqcompare.hamming.pairstats.SiteCodes`) through the engine: per-pair
    counts, the ``model``'s distances, then ``reduction``. The layer the model functions and the command line
    share (as :func:`run_hamming` is for counts of differences), ``collapse`` included. ``screen``: the
    threshold of a reduction that keeps only pairs within it (see
    :class:`~seqcompare.hamming.pairstats.PairStatsWork`); never with one that keeps every value."""
    from .pairstats import PairStatsWork

    executor, device, tile_size = _executor(threads, tile_size, device, client)

    def work_of(rows):
        return PairStatsWork(rows, model=model, ambiguities=ambiguities, fraction=fraction, min_overlap=min_overlap,
                             with_sites=with_sites, tile_size=tile_size, screen=screen)  # fmt: skip

    return _run(work_of, codes, reduction, executor, progress, model, collapse)


def model_distances(X, Y=None, *, model="p", ambiguities="resolve", fraction=1.0, min_overlap=0, sites=False,
                    keep_case=False, missing=None, threads=None, tile_size=None, progress=False, device="cpu",
                    client=None, collapse=False):  # fmt: skip
    """All-pairs evolutionary distances (p, JC69, K2P, TN93) or SNP counts, with the comparable sites.

    Parameters
    ----------
    X, Y : Alignment, path, list of str, or character array
        Sequences, as for :func:`hamming`.
    model : {"snp", "p", "jc69", "k2p", "tn93"}
        ``snp``: differing comparable sites (a count); ``p``: that over the comparable sites; ``jc69``, ``k2p``:
        Jukes-Cantor and Kimura 2-parameter corrections of it. These read A, C, G and T only (snp-dists'
        alphabet). ``tn93``: Tamura-Nei 1993 as veg/tn93 computes it (the HIV-TRACE standard), reading IUPAC
        codes, ``?`` and ``-`` by its ``ambiguities`` rules, with per-pair base frequencies; any other character
        is an error.
    ambiguities : {"resolve", "average", "skip", "gapmm"}
        TN93 only, as veg/tn93's ``-a``.
    fraction : float
        TN93 under ``resolve``: pairs where at least this fraction of the comparable sites resolved an
        ambiguity are averaged instead (veg/tn93's ``-d``; 1 never).
    min_overlap : int
        Pairs with fewer comparable sites are missing (NaN). veg/tn93's ``-l L`` keeps pairs with more than L
        sites: ``min_overlap=L + 1``.
    sites : bool
        Also return the comparable sites of every pair.
    keep_case, missing, threads, tile_size, progress, device, client
        As for :func:`hamming`.
    collapse : bool
        Compute each distinct sequence (identical once read under the model's alphabet) once, then expand:
        identical results. A pair of duplicates gets the model's value of the sequence against itself (not
        always 0 for TN93 with ambiguity codes).

    Returns
    -------
    distances : ndarray of float64, shape (n, n) or (n, p)
        NaN where a pair is missing; ``inf`` past saturation (JC69, K2P), 1000 for TN93 as veg/tn93 reports it.
    sites : ndarray of int64, same shape
        With ``sites=True``: comparable sites (A/C/G/T in both; for TN93, neither a gap).

    Examples
    --------
    >>> import seqcompare
    >>> seqcompare.model_distances(["ACGTACGTAC", "ACGTACGTAT"], model="p")
    array([[0. , 0.1],
           [0.1, 0. ]])
    """
    from ..allpairs import Combined, Field

    models.check_options(model, ambiguities, fraction, min_overlap)
    codes = encode_site_codes(X, Y, "tn93" if model == "tn93" else "acgt", keep_case, missing)
    shape = (codes.n_left, codes.n_left if codes.symmetric else codes.n_right)
    reduction = MatrixReduction(shape, codes.symmetric, np.float64)
    if sites:
        reduction = Combined(Field(reduction, 0), Field(MatrixReduction(shape, codes.symmetric, np.int64), 1))
    return run_model(codes, reduction, model=model, ambiguities=ambiguities, fraction=fraction,
                     min_overlap=min_overlap, with_sites=sites, threads=threads, tile_size=tile_size,
                     progress=progress, device=device, client=client, collapse=collapse)  # fmt: skip


def model_pairs(X, Y=None, *, max_dist, model="p", ambiguities="resolve", fraction=1.0, min_overlap=0, sites=False,
                keep_case=False, missing=None, threads=None, tile_size=None, progress=False, device="cpu",
                client=None, collapse=False):  # fmt: skip
    """Pairs within a model distance (HIV-TRACE links at TN93 0.015), without the matrix.

    Parameters
    ----------
    max_dist : float
        Report pairs at distance ``<= max_dist`` (missing pairs never are).
    X, Y, model, ambiguities, fraction, min_overlap, sites, keep_case, missing, threads, tile_size, progress,
    device, client, collapse
        As for :func:`model_distances`.

    Returns
    -------
    i, j : ndarray of int64
        Sorted by ``(i, j)``; without ``Y`` each unordered pair once, ``i < j``.
    d : ndarray of float64
    sites : ndarray of int64
        With ``sites=True``.
    """
    models.check_options(model, ambiguities, fraction, min_overlap)
    codes = encode_site_codes(X, Y, "tn93" if model == "tn93" else "acgt", keep_case, missing)
    pairs = PairsReduction(float(max_dist), codes.symmetric, extras=int(sites))
    return run_model(codes, pairs, model=model, ambiguities=ambiguities, fraction=fraction, min_overlap=min_overlap,
                     with_sites=sites, threads=threads, tile_size=tile_size, progress=progress, device=device,
                     client=client, collapse=collapse, screen=float(max_dist))  # fmt: skip


def clusters(X, *, max_dist, model="snp", alphabet="acgt", ambiguities="resolve", fraction=1.0, min_overlap=0,
             keep_case=False, missing=None, threads=None, tile_size=None, progress=False, device="cpu",
             client=None, collapse=False):  # fmt: skip
    """Single-linkage clusters: the connected components of the pairs at distance ``<= max_dist``.

    The pairs are reduced where they are found (CPU threads, the GPU's epilogue, Dask workers) into a forest of
    ``n`` indices, so they are never all held or written.

    Parameters
    ----------
    X : Alignment, path, list of str, or array_like
        As for :func:`hamming`.
    max_dist : int or float
        SNPs (``model="snp"``, any ``alphabet``) or a model distance.
    model : {"snp", "p", "jc69", "k2p", "tn93"}
        ``snp`` counts differences with :func:`hamming`'s kernels (every alphabet); the others are
        :func:`model_distances`'.
    alphabet, keep_case, missing, threads, tile_size, progress, device, client, collapse
        As for :func:`hamming`.
    ambiguities, fraction, min_overlap
        As for :func:`model_distances` (model distances only).

    Returns
    -------
    ndarray of int64, shape (n,)
        Each sequence's cluster: 0, 1, ... numbered by each cluster's first member in input order; a
        singleton is a cluster of its own.

    Examples
    --------
    >>> import seqcompare
    >>> seqcompare.clusters(["AAAA", "TTTT", "AAAT", "TTTG"], max_dist=1)
    array([0, 1, 0, 1])
    """
    from ..allpairs import ClusterReduction

    if max_dist < 0:
        raise ValueError(f"max_dist must be at least 0, got {max_dist}")
    if model == "snp" and min_overlap == 0:
        max_dist = validation.integer(max_dist, "max_dist", minimum=0)
        encoded = encode_inputs(X, alphabet=alphabet, keep_case=keep_case, missing=missing)
        return run_hamming(encoded, ClusterReduction(max_dist, encoded.n_left), cap=max_dist + 1, threads=threads,
                           tile_size=tile_size, progress=progress, device=device, client=client,
                           collapse=collapse)  # fmt: skip
    models.check_options(model, ambiguities, fraction, min_overlap)
    codes = encode_site_codes(X, None, "tn93" if model == "tn93" else "acgt", keep_case, missing)
    return run_model(codes, ClusterReduction(float(max_dist), codes.n_left), model=model, ambiguities=ambiguities,
                     fraction=fraction, min_overlap=min_overlap, threads=threads, tile_size=tile_size,
                     progress=progress, device=device, client=client, collapse=collapse,
                     screen=float(max_dist))  # fmt: skip


def duplicates(X, *, model=None, alphabet="acgt", keep_case=False, missing=None):
    """Each sequence's representative: the first sequence identical to it under the comparison's rules.

    Identical means identical once encoded, so that the two have the same distance to every sequence: under
    ``alphabet`` for SNP counts (:func:`hamming`; with ``"acgt"``, ``ACGN`` and ``ACG-`` are identical), or under
    the ``model``'s alphabet for model distances (:func:`model_distances`; TN93 tells every IUPAC code apart).
    Rows are hashed, then rows with equal hashes compared in full, so a hash collision never merges two.

    Parameters
    ----------
    X : Alignment, path, list of str, or array_like
        As for :func:`hamming`.
    model : {None, "snp", "p", "jc69", "k2p", "tn93"}
        None: identity under :func:`hamming`'s ``alphabet``.
    alphabet, keep_case, missing
        As for :func:`hamming`.

    Returns
    -------
    ndarray of int64, shape (n,)
        The index of each sequence's representative (itself for a first occurrence).

    Examples
    --------
    >>> import seqcompare
    >>> seqcompare.duplicates(["ACGT", "acgt", "ACGA", "ACGN", "ACG-"])
    array([0, 0, 2, 3, 3])
    """
    if model is None:
        encoded = encode_inputs(X, alphabet=alphabet, keep_case=keep_case, missing=missing)
    else:
        models.check_options(model)
        encoded = encode_site_codes(X, None, "tn93" if model == "tn93" else "acgt", keep_case, missing)
    return find_duplicates(encoded)[0].representative_of()


def differing_sites(X, i, j, Y=None, *, model=None, alphabet="acgt", ambiguities="resolve", keep_case=False,
                    missing=None):  # fmt: skip
    """The sites where pairs of sequences differ, under the rules that count their distance.

    Parameters
    ----------
    X, Y : Alignment, path, list of str, or character array
        Sequences, as for :func:`hamming`; pairs are ``(X[i], Y[j])``, or ``(X[i], X[j])`` without ``Y``.
    i, j : array_like of int
        The pairs (the first two arrays of :func:`hamming_pairs` or :func:`model_pairs`, for instance).
    model : {None, "snp", "p", "jc69", "k2p", "tn93"}
        None: :func:`hamming`'s rules under ``alphabet``, so each pair lists as many sites as its distance.
        A model: :func:`model_distances`' alphabet; under ``tn93`` the comparable sites whose weight is not all
        on matching bases (by ``ambiguities``).
    alphabet, keep_case, missing
        As for :func:`hamming`.
    ambiguities : {"resolve", "average", "skip", "gapmm"}
        As for :func:`model_distances`.

    Returns
    -------
    i, j, column : ndarray of int64
        One entry per differing site, ordered as the pairs were given, then by column (0-based).

    Examples
    --------
    >>> import seqcompare
    >>> seqcompare.differing_sites(["ACGTAC", "ACCTAN", "TCGTAC"], [0, 0], [1, 2])
    (array([0, 0]), array([1, 2]), array([2, 0]))
    """
    from .diffsites import byte_difference_table
    from .diffsites import differing_sites as sites_of_pairs

    kind, left = _as_matrix(read_alignment(X) if isinstance(X, (str, os.PathLike)) else X, "X")
    right = left
    if Y is not None:
        _, right = _as_matrix(read_alignment(Y) if isinstance(Y, (str, os.PathLike)) else Y, "Y")
        if right.shape[1] != left.shape[1]:
            raise InputError(f"X has {left.shape[1]} sites but Y has {right.shape[1]}; they must be equally long")
    if kind != "sequences":
        raise InputError("differing sites are listed for sequences, not value arrays")
    i, j = np.asarray(i, dtype=np.int64).ravel(), np.asarray(j, dtype=np.int64).ravel()
    if i.shape != j.shape:
        raise ValueError(f"i and j must be equally long, got {i.size} and {j.size}")
    for name, index, count in (("i", i, left.shape[0]), ("j", j, right.shape[0])):
        if index.size and (index.min() < 0 or index.max() >= count):
            raise IndexError(f"{name} holds an index outside 0..{count - 1}")
    table = byte_difference_table(model=model, alphabet=alphabet, ambiguities=ambiguities, keep_case=keep_case,
                                  missing="".join(missing) if missing else "")  # fmt: skip
    pair, column = sites_of_pairs(left, right, i, j, table)
    return i[pair], j[pair], column

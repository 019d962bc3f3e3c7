import itertools

import numpy as np
import pytest

import seqcompare
from seqcompare.allpairs import SerialExecutor, ThreadExecutor, plan_tiles, run_tiles
from seqcompare.allpairs import LowerTriangleSink, MatrixSink


@pytest.mark.parametrize("n, tile", [(1, 1), (5, 2), (17, 4), (64, 64), (65, 64), (100, 7)])
def test_symmetric_plan_covers_every_pair_once(n, tile):
    seen = []
    for t in plan_tiles(n, None, tile):
        for i in range(t.row_start, t.row_stop):
            for j in range(t.col_start, t.col_stop):
                if not t.diagonal or j < i:
                    seen.append((i, j))
    assert sorted(seen) == [(i, j) for i in range(n) for j in range(i)]
    assert sum(t.n_pairs for t in plan_tiles(n, None, tile)) == n * (n - 1) // 2


def test_rectangular_plan_covers_every_cell_once():
    cells = [(i, j) for t in plan_tiles(7, 5, 3)
             for i in range(t.row_start, t.row_stop) for j in range(t.col_start, t.col_stop)]  # fmt: skip
    assert sorted(cells) == list(itertools.product(range(7), range(5)))


def test_executors_agree_and_sinks_assemble():
    n = 23
    values = np.arange(n * n).reshape(n, n)
    values = values + values.T
    np.fill_diagonal(values, 0)

    def kernel(tile):
        return values[tile.row_start : tile.row_stop, tile.col_start : tile.col_stop]

    for executor in (SerialExecutor(), ThreadExecutor(3)):
        tiles = plan_tiles(n, None, 4)
        got = run_tiles(kernel, tiles, executor, MatrixSink((n, n), True, np.int64))
        np.testing.assert_array_equal(got, values)
        blocks = []
        sink = LowerTriangleSink(n, lambda start, rows: blocks.append((start, rows.copy())), np.int64)
        run_tiles(kernel, plan_tiles(n, None, 4), executor, sink)
        for start, rows in blocks:
            for k, row in enumerate(rows):
                i = start + k
                np.testing.assert_array_equal(row[: i + 1], values[i, : i + 1])
        assert [s for s, _ in blocks] == list(range(0, n, 4))


def test_import_does_not_load_heavy_modules():
    import subprocess
    import sys

    code = "import sys, seqcompare; print(sorted(m for m in ('numba', 'cupy', 'dask', 'tqdm') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert seqcompare.__version__


@pytest.mark.parametrize("row_edge,col_edge", [(1, 1), (128, 128), (256, 128), (64, 64)])
def test_gpu_micro_tile_lists_cover_exactly_the_blocks_that_reach_the_lower_triangle(row_edge, col_edge):
    from seqcompare.hamming.gpu import micro_tiles  # plain NumPy: imports no CuPy

    for rows in (range(0), range(1), range(3, 9), range(12)):
        got = micro_tiles(rows, None, True, row_edge, col_edge)
        expected = [(r, c) for r in rows for c in range(10_000) if c * col_edge <= (r + 1) * row_edge - 1]
        assert got.dtype == np.int32 and got.shape == (len(expected), 2)
        assert [tuple(t) for t in got.tolist()] == expected
    rectangular = micro_tiles(range(2, 5), range(1, 4), False)
    assert [tuple(t) for t in rectangular.tolist()] == [(r, c) for r in range(2, 5) for c in range(1, 4)]

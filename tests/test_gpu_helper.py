"""The forked GPU helper process (:mod:`seqcompare.cuda.helper`): arrays shared by reference, results and errors
sent back, and the Hamming command's runs through it equal to the in-process runs.

Without a GPU the helper's start is a stand-in and its work runs on the CPU (the fork carries the patches), so
what is checked here is the sharing and the plumbing; the GPU test at the end runs the real thing.
"""

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import DATA

import seqcompare.hamming.api
from seqcompare.cuda import helper as gpu_helper
from seqcompare.errors import DeviceError, InputError
from seqcompare.io.fasta import FileRows

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="the helper needs memfd_create (Linux)")


def describe(*arrays, **named):
    """In the helper: each array's contents, whether it can be written, and its strides."""
    return [(np.array(a), a.flags.writeable, a.strides) for a in arrays], {k: np.array(v) for k, v in named.items()}


def fail_with(exc):
    raise exc


def no_start():
    pass


def test_arrays_in_the_shared_file_travel_by_reference_and_others_by_value():
    rng = np.random.default_rng(5)
    with gpu_helper.GpuHelper(start=no_start) as helper:
        first = helper.empty((300, 70), np.uint8)
        first[...] = rng.integers(0, 256, first.shape)
        second = helper.empty((5, 3), np.float64)  # a later allocation: the file grows after the fork
        second[...] = rng.random(second.shape)
        private = rng.integers(0, 9, (4, 4))
        views = [first, first[10:20], first[:, 5:9], first.T, first[::-3, ::2], second, private]
        described, named = helper.call(describe, *views, table=private[1:])
    for view, (contents, writeable, strides) in zip(views, described):
        np.testing.assert_array_equal(contents, view)
        assert strides == view.strides
    # Shared arrays arrive as read-only views of the file; the private one was pickled (a writable copy).
    assert [writeable for _, writeable, _ in described] == [False] * 6 + [True]
    np.testing.assert_array_equal(named["table"], private[1:])
    empty = gpu_helper.SharedArrays(os.memfd_create("test"))
    assert empty.reference(np.zeros(3)) is None  # nothing shared yet


def test_regions_locked_before_they_are_written_hold_what_the_parent_writes(monkeypatch):
    # A large array is page-locked by the helper as soon as it is made, while the parent fills it: the helper
    # must then read what the parent wrote after the lock (the same pages), through the region it locked.
    monkeypatch.setattr(gpu_helper, "LOCK_SHARED_FROM", 1)
    monkeypatch.setattr(gpu_helper, "EARLY_LOCK", True)
    with gpu_helper.GpuHelper(start=no_start, warm_up=no_start) as helper:
        array = helper.empty((1000, 17), np.int32)
        helper.call(describe)  # the lock message has been handled before this returns
        locked = helper.timings
        assert "helper_lock_s" in locked or "helper_lock_error" in locked  # no GPU (or CUDA used here): not locked
        array[...] = np.arange(array.size).reshape(array.shape)
        time.sleep(0.3)  # the helper is idle meanwhile, so it warms up (if it had not before the first call)
        (contents, writeable, _), = helper.call(describe, array[3:])[0]
        np.testing.assert_array_equal(contents, array[3:])
        assert not writeable
        assert "helper_warm_up_s" in helper.timings


def test_regions_are_locked_before_the_call_that_reads_them(monkeypatch):
    monkeypatch.setattr(gpu_helper, "LOCK_SHARED_FROM", 1)
    with gpu_helper.GpuHelper(start=no_start) as helper:
        array = helper.empty((300, 5), np.float32)
        array[...] = np.arange(array.size).reshape(array.shape)
        (contents, _, _), = helper.call(describe, array)[0]
        np.testing.assert_array_equal(contents, array)
        assert "helper_lock_s" in helper.timings or "helper_lock_error" in helper.timings


def test_failures_reach_the_parent_as_errors_naming_them():
    with gpu_helper.GpuHelper(start=no_start) as helper:
        with pytest.raises(InputError, match="bad record"):
            helper.call(fail_with, InputError("bad record"))
        with pytest.raises(ValueError, match="method must be"):  # the helper keeps serving after an error
            helper.call(fail_with, ValueError("method must be one of"))
        with pytest.raises(DeviceError, match="GPU helper process: ZeroDivisionError"):
            helper.call(fail_with, ZeroDivisionError("x"))
        with pytest.raises(DeviceError, match=r"ended unexpectedly \(exit code 7\)"):
            helper.call(os._exit, 7)
    with gpu_helper.GpuHelper(start=lambda: fail_with(DeviceError("no CUDA device is visible"))) as helper:
        with pytest.raises(DeviceError, match="no CUDA device is visible"):
            helper.call(describe)


def say(text):
    """Written by the helper: to its stdout (nowhere), its stderr descriptor (nowhere) and ``sys.stderr``."""
    print("to stdout", flush=True)
    os.write(2, b"to descriptor 2\n")
    print(text, file=sys.stderr, end="")
    return os.readlink("/proc/self/fd/1"), os.readlink("/proc/self/fd/2")


def test_the_helper_lets_go_of_the_standard_streams_and_relays_its_stderr(capfd):
    with gpu_helper.GpuHelper(start=no_start) as helper:
        targets = helper.call(say, "warning from the helper\n")
        held = {os.readlink(f"/proc/{helper.pid}/fd/{k}") for k in (0, 1, 2)}
        print("the parent's own line", file=sys.stderr)
        helper.call(say, "")  # nothing new to relay
    assert targets == (os.devnull, os.devnull)
    assert held == {os.devnull}  # a reader of the command's pipes never waits for a killed helper to end
    captured = capfd.readouterr()
    assert captured.out == ""
    assert captured.err == "warning from the helper\nthe parent's own line\n"


# -- the Hamming command through the helper --------------------------------------------------------------------


def run_hamming_on_cpu(encoded, reduction, **options):
    """For a machine without a GPU: the engine on the CPU; in the helper, after checking that the rows came as a
    view of the shared file (read-only there) or as rows in place in the input file, not as a pickled copy. The
    kinds of rows seen are appended to the file named by $SEQCOMPARE_TEST_ROWS_SEEN."""
    if os.getpid() != TEST_PROCESS:
        sides = [rows for rows in (encoded.left, encoded.right) if rows is not None]
        assert all(isinstance(rows, FileRows) or not rows.flags.writeable for rows in sides)
        with open(os.environ["SEQCOMPARE_TEST_ROWS_SEEN"], "a") as seen:
            seen.write(" ".join(type(rows).__name__ for rows in sides) + "\n")
    return RUN_HAMMING(encoded, reduction, **{**options, "device": "cpu", "method": "auto"})


RUN_HAMMING = seqcompare.hamming.api.run_hamming
TEST_PROCESS = os.getpid()


@pytest.fixture
def hamming_helper_on_cpu(monkeypatch):
    import seqcompare.cli.hamming
    import seqcompare.cuda.runtime

    monkeypatch.setattr(seqcompare.cuda.runtime, "require_gpu_quickly", lambda: None)
    monkeypatch.setattr(gpu_helper, "supported", lambda: True)  # also where this process has imported CuPy
    monkeypatch.setattr(seqcompare.cli.hamming, "_helper_start", lambda args: no_start)
    monkeypatch.setattr(seqcompare.hamming.api, "run_hamming", run_hamming_on_cpu)
    return monkeypatch


@pytest.fixture(scope="module")
def regular_fasta(tmp_path_factory):
    """An alignment above the reader's 16 MB threshold (read by strided copies into the shared file)."""
    from seqcompare.simulate import simulate_alignment, write_fasta

    names, sequences = simulate_alignment(600, 29_903, seed=3, lineages=40, private_rate=0.0001)
    path = tmp_path_factory.mktemp("helper") / "regular.fasta"
    write_fasta(str(path), names, sequences)
    assert path.stat().st_size > 16 << 20
    return str(path)


@pytest.mark.parametrize("flags", [["--max-dist", "12"], ["--knn", "3", "-c"], ["--max-dist", "25", "--collapse"]])
def test_cli_runs_through_the_helper_equal_the_in_process_runs(hamming_helper_on_cpu, regular_fasta, tmp_path,
                                                               capsys, flags):  # fmt: skip
    from seqcompare.cli import main

    gz = os.path.join(DATA, "sarscov2_338.fasta.gz")  # a small file (the compiled scan, into the shared file)
    seen = tmp_path / "seen.txt"
    hamming_helper_on_cpu.setenv("SEQCOMPARE_TEST_ROWS_SEEN", str(seen))
    runs = [[regular_fasta], [gz], [gz, "--ref", gz], [regular_fasta, "--ref", regular_fasta]]
    for k, inputs in enumerate(runs):
        helped, plain = tmp_path / f"helped{k}.tsv", tmp_path / f"plain{k}.tsv"
        assert main(["hamming", *inputs, *flags, "--device", "cuda", "-o", str(helped)]) == 0
        assert "computed on the GPU by a helper process" in capsys.readouterr().err
        assert main(["hamming", "-q", *inputs, *flags, "-o", str(plain)]) == 0
        assert helped.read_bytes() == plain.read_bytes() and helped.read_bytes().count(b"\n") > 50
    # The large regular file's rows go to the helper where they lie in the file, unless duplicates are wanted
    # (this process then reads them); the small gzip file's through the shared file.
    in_place = "--collapse" not in flags
    kinds = "FileRows" if in_place else "ndarray"
    assert seen.read_text().splitlines() == [kinds, "ndarray", "ndarray ndarray", f"{kinds} {kinds}"]


def test_cli_failures_in_the_helper_are_one_line_errors_and_leave_no_output(hamming_helper_on_cpu, tmp_path,
                                                                           capsys):  # fmt: skip
    import seqcompare.cli.hamming
    from seqcompare.cli import main

    gz = os.path.join(DATA, "sarscov2_338.fasta.gz")
    target = tmp_path / "never.tsv"
    hamming_helper_on_cpu.setattr(seqcompare.cli.hamming, "_helper_start",
                                  lambda args: lambda: fail_with(DeviceError("CuPy is installed but no CUDA device "
                                                                             "can be used")))  # fmt: skip
    assert main(["hamming", gz, "--max-dist", "3", "--device", "cuda", "-o", str(target)]) == 1
    err = capsys.readouterr().err
    assert "CuPy is installed but no CUDA device can be used" in err and err.count("error") == 1
    hamming_helper_on_cpu.setattr(seqcompare.cli.hamming, "_helper_start", lambda args: no_start)
    bad = tmp_path / "bad.fa"
    bad.write_text(">a\nACGT\n>b\nAC#T\n")
    assert main(["hamming", str(bad), "--max-dist", "3", "--device", "cuda", "-o", str(target)]) == 1
    err = capsys.readouterr().err
    assert "record #2 'b' has an illegal character '#' at position 3" in err and err.count("error") == 1
    bad.unlink()
    hamming_helper_on_cpu.setattr(seqcompare.hamming.api, "run_hamming", lambda *a, **k: os._exit(3))
    assert main(["hamming", gz, "--max-dist", "3", "--device", "cuda", "-o", str(target)]) == 1
    assert "GPU helper process ended unexpectedly (exit code 3)" in capsys.readouterr().err
    assert not target.exists() and os.listdir(tmp_path) == []


def test_no_helper_is_forked_by_a_process_that_imported_cupy(monkeypatch):
    # CUDA started in a process cannot be used in its forks: the command line then runs in the process.
    monkeypatch.setitem(sys.modules, "cupy", object())
    assert not gpu_helper.supported()


def test_only_small_results_go_through_the_helper(monkeypatch):
    import argparse

    monkeypatch.setattr(gpu_helper, "supported", lambda: True)
    from seqcompare.cli import build_parser
    from seqcompare.cli.hamming import _uses_gpu_helper

    def uses(*words):
        args = build_parser().parse_args(["hamming", "x.fa", *words])
        return _uses_gpu_helper(args)

    assert uses("--device", "cuda", "--max-dist", "3") and uses("--device", "cuda", "--knn", "2")
    assert not uses("--max-dist", "3")  # the CPU
    assert not uses("--device", "cuda")  # the whole matrix, streamed
    assert not uses("--device", "cuda", "--npy", "d.npy")
    assert not uses("--device", "cuda", "--max-dist", "3", "--cluster", "local")
    assert not uses("--device", "cuda", "--max-dist", "3", "--model", "tn93")
    assert isinstance(build_parser().parse_args(["hamming", "x.fa"]), argparse.Namespace)


# -- on a GPU ---------------------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("flags", [["--max-dist", "12"], ["--knn", "3"], ["--max-dist", "40", "--iupac"]])
def test_gpu_cli_through_the_helper_equals_the_cpu(regular_fasta, tmp_path, flags):
    gz = os.path.join(DATA, "sarscov2_338.fasta.gz")
    for inputs in ([regular_fasta], [regular_fasta, "--ref", regular_fasta], [gz, "--ref", regular_fasta]):
        base = [sys.executable, "-m", "seqcompare", "hamming", *inputs, *flags]
        cpu = subprocess.run(base + ["-q"], capture_output=True, check=True).stdout
        done = subprocess.run(base + ["--device", "cuda"], capture_output=True, check=True)
        assert b"computed on the GPU by a helper process" in done.stderr
        assert done.stdout == cpu
        assert cpu.count(b"\n") > 50 or (inputs[0] == gz and "--knn" not in flags)


def test_a_helpers_start_imports_cupy_beside_the_driver_then_finishes(monkeypatch):
    """The shared start of the GPU helpers: the driver's thread joined before the command's own part runs, each
    stage timed; without CuPy, its error is what the start raises."""
    import threading

    from seqcompare.cuda import runtime
    from seqcompare.errors import DeviceError

    order = []

    def started_thread():
        thread = threading.Thread(target=lambda: order.append("driver"))
        thread.start()
        return thread

    monkeypatch.setattr(runtime, "start_driver_in_background", started_thread)
    monkeypatch.setattr(runtime, "require_cupy", lambda: order.append("cupy"))
    stages = runtime.start_cupy_beside_the_driver(lambda: order.append("finish"), "kernels")
    assert sorted(order[:2]) == ["cupy", "driver"] and order[2:] == ["finish"]
    assert sorted(stages) == ["helper_cupy_import_s", "helper_driver_wait_s", "helper_kernels_s"]
    assert all(isinstance(value, float) and value >= 0 for value in stages.values())

    def no_cupy():
        raise DeviceError("no CuPy here")

    monkeypatch.setattr(runtime, "require_cupy", no_cupy)
    with pytest.raises(DeviceError, match="no CuPy here"):
        runtime.start_cupy_beside_the_driver(lambda: order.append("never"), "kernels")
    assert "never" not in order

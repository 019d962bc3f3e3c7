"""Outputs never destroy anything: devices, FIFOs and links are written through, inputs are refused, finished
files get the umask's mode, and no temporary file survives an error or a signal."""

import os
import signal
import stat
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from conftest import small_vcf

from seqcompare.cli import main
from seqcompare.io.output import PendingFile, check_outputs, open_output

HERE = os.path.dirname(__file__)
GOOD = os.path.join(HERE, "data", "good.aln")
GOOD_MATRIX = "snp-dists 0.8.2\tseq1\tseq2\tseq3\tseq4\nseq1\t0\t1\t2\t3\nseq2\t1\t0\t3\t4\nseq3\t2\t3\t0\t4\nseq4\t3\t4\t4\t0\n"


def run(capsysbinary, *argv):
    code = main([str(a) for a in argv])
    captured = capsysbinary.readouterr()
    return code, captured.out.decode(), captured.err.decode()


def leftovers(directory) -> list:
    return sorted(p for p in os.listdir(directory) if p.startswith(".seqcompare-"))


def test_dev_null_stays_a_character_device(capsysbinary):
    before = os.stat("/dev/null")
    code, out, err = run(capsysbinary, "hamming", "-q", GOOD, "-o", "/dev/null")
    assert code == 0 and out == "" and err == ""
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


@pytest.mark.parametrize("name", ["-", "/dev/stdout"])
def test_dash_and_dev_stdout_are_standard_output(capsysbinary, name):
    code, out, _ = run(capsysbinary, "hamming", "-q", GOOD, "-o", name)
    assert code == 0 and out == GOOD_MATRIX


def test_a_fifo_is_written_through_not_replaced(tmp_path, capsysbinary):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
    reader.start()
    code, _, _ = run(capsysbinary, "hamming", "-q", GOOD, "-o", fifo)
    reader.join(10)
    assert code == 0 and received == [GOOD_MATRIX.encode()]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and leftovers(tmp_path) == []


@pytest.mark.parametrize("option", ["-o", "--npy"])
def test_a_symlink_is_written_through_and_kept(tmp_path, capsysbinary, option):
    target = tmp_path / "real"
    target.write_bytes(b"old contents")
    os.chmod(target, 0o640)
    other_name = tmp_path / "hard"
    os.link(target, other_name)
    link = tmp_path / "link"
    os.symlink(target, link)
    code, _, _ = run(capsysbinary, "hamming", "-q", GOOD, option, link)
    assert code == 0
    assert os.path.islink(link) and os.readlink(link) == str(target)
    if option == "-o":
        assert target.read_text() == GOOD_MATRIX
    else:
        assert np.array_equal(np.load(target), [[0, 1, 2, 3], [1, 0, 3, 4], [2, 3, 0, 4], [3, 4, 4, 0]])
    # written in place, as `cat > link` would: the same inode, its mode, its other names
    assert os.path.samefile(target, other_name) and stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert leftovers(tmp_path) == []


def test_a_symlink_to_a_device_streams(tmp_path, capsysbinary):
    link = tmp_path / "null"
    os.symlink("/dev/null", link)
    assert run(capsysbinary, "hamming", "-q", GOOD, "-o", link)[0] == 0
    assert os.path.islink(link) and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_new_files_get_the_umasks_mode_and_existing_files_keep_theirs(tmp_path, capsysbinary):
    previous = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.tsv"
        assert run(capsysbinary, "hamming", "-q", GOOD, "-o", fresh)[0] == 0
        assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o644
        npy = tmp_path / "d.npy"
        assert run(capsysbinary, "hamming", "-q", GOOD, "--npy", npy)[0] == 0
        assert stat.S_IMODE(os.stat(npy).st_mode) == 0o644
        assert stat.S_IMODE(os.stat(str(npy) + ".names.tsv").st_mode) == 0o644
        os.umask(0o077)
        private = tmp_path / "private.tsv"
        assert run(capsysbinary, "simulate", "alignment", "-n", "3", "-l", "10", "-o", private)[0] == 0
        assert stat.S_IMODE(os.stat(private).st_mode) == 0o600
        os.chmod(fresh, 0o604)
        assert run(capsysbinary, "hamming", "-q", GOOD, "-o", fresh)[0] == 0
        assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o604
    finally:
        os.umask(previous)
    assert leftovers(tmp_path) == []


def _ccc_input(tmp_path):
    return small_vcf(tmp_path / "g.vcf")


def _commands(tmp_path):
    """Every subcommand with its inputs, as (argv builder taking the output, the inputs)."""
    fasta = tmp_path / "a.fa"
    fasta.write_text(">a\nACGTACGT\n>b\nACGAACGT\n")
    fastq = tmp_path / "r.fq"
    fastq.write_text("@r\nACGTACGTACGT\n+\nIIIIIIIIIIII\n")
    signals = tmp_path / "s.csv"
    signals.write_text("1,2,3\n2,3,4\n")
    vcf = _ccc_input(tmp_path)
    return {
        "hamming": (lambda out, *o: ["hamming", "-q", fasta, *o, out], [fasta]),
        "hamming --ref": (lambda out, *o: ["hamming", "-q", fasta, "--ref", fasta, *o, out], [fasta]),
        "scan (samples)": (lambda out, *o: ["scan", "-q", fastq, fasta, *o, out], [fastq]),
        "scan (signatures)": (lambda out, *o: ["scan", "-q", fastq, fasta, *o, out], [fasta]),
        "ccc": (lambda out, *o: ["ccc", "-q", vcf, *o, out], [vcf]),
        "align": (lambda out, *o: ["align", "-q", fasta, fasta, *o, out], [fasta]),
        "dtw": (lambda out, *o: ["dtw", "-q", signals, *o, out], [signals]),
    }


@pytest.mark.parametrize("command", ["hamming", "hamming --ref", "scan (samples)", "scan (signatures)", "ccc",
                                     "align", "dtw"])  # fmt: skip
@pytest.mark.parametrize("how", ["same path", "symbolic link", "hard link"])
def test_an_output_that_is_an_input_is_refused_before_any_work(tmp_path, capsysbinary, command, how):
    argv, inputs = _commands(tmp_path)[command]
    victim = inputs[0]
    before = victim.read_bytes()
    output = victim
    if how == "symbolic link":
        output = tmp_path / "alias"
        os.symlink(victim, output)
    elif how == "hard link":
        output = tmp_path / "twin"
        os.link(victim, output)
    code, out, err = run(capsysbinary, *argv(output, "-o"))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("seqcompare: error: -o ") and "refusing to overwrite an input" in err
    assert victim.read_bytes() == before and leftovers(tmp_path) == []


def test_npy_histogram_and_simulate_outputs_are_checked_too(tmp_path, capsysbinary):
    vcf = _ccc_input(tmp_path)
    code, _, err = run(capsysbinary, "ccc", "-q", vcf, "--histogram", vcf)
    assert code == 1 and "--histogram" in err and "refusing to overwrite an input" in err
    code, _, err = run(capsysbinary, "hamming", "-q", GOOD, "--npy", GOOD)
    assert code == 1 and "--npy" in err
    code, _, err = run(capsysbinary, "simulate", "scan", "--samples-out", tmp_path / "x", "--signatures-out",
                       tmp_path / "x")  # fmt: skip
    assert code == 1 and "--signatures-out" in err and "is also the output of --samples-out" in err
    assert not (tmp_path / "x").exists()


def test_check_outputs_sees_through_links(tmp_path):
    source = tmp_path / "in.fa"
    source.write_text(">a\nA\n")
    os.symlink(source, tmp_path / "l")
    with pytest.raises(ValueError, match="refusing"):
        check_outputs({"-o": str(tmp_path / "l")}, [str(source)])
    check_outputs({"-o": "/dev/null", "--histogram": "/dev/null"}, [str(source)])  # one device, two outputs: fine


def test_any_exception_removes_the_temporary_file(tmp_path, monkeypatch, capsysbinary):
    from seqcompare.io import tables

    calls = []

    def failing_write_rows(*args, **kwargs):
        calls.append(1)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(tables, "write_rows", failing_write_rows)
    target = tmp_path / "out.tsv"
    with pytest.raises(RuntimeError, match="disk on fire"):
        main(["hamming", "-q", GOOD, "-L", "-o", str(target)])
    assert calls and not target.exists() and leftovers(tmp_path) == []
    pending = PendingFile(tmp_path / "x.npy")
    assert os.path.exists(pending.path)
    pending.abort()
    assert os.listdir(tmp_path) == []
    with pytest.raises(KeyboardInterrupt):
        with open_output(tmp_path / "y.tsv") as out:
            out.write(b"partial")
            raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def _wait_for(predicate, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize("number, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_sigterm_and_sigint_leave_nothing_behind(tmp_path, number, status):
    alignment = tmp_path / "big.fa"
    subprocess.run([sys.executable, "-m", "seqcompare", "simulate", "alignment", "-n", "3000", "-l", "3000", "-o",
                    str(alignment)], check=True)  # fmt: skip
    out = tmp_path / "out"
    out.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "seqcompare", "hamming", "--method", "vector", "-j", "1",
                                str(alignment), "--npy", str(out / "d.npy")], stderr=subprocess.PIPE)  # fmt: skip
    _wait_for(lambda: leftovers(out) or process.poll() is not None)
    assert process.poll() is None, "the run ended before it could be interrupted"
    process.send_signal(number)
    _, err = process.communicate(timeout=120)
    assert process.returncode == status, err.decode()
    assert os.listdir(out) == [] and err.decode().rstrip().endswith(("terminated (SIGTERM)", "interrupted"))


@pytest.mark.slow
def test_sigterm_stops_a_local_dask_cluster_cleanly(tmp_path):
    pytest.importorskip("distributed")
    alignment = tmp_path / "big.fa"
    subprocess.run([sys.executable, "-m", "seqcompare", "simulate", "alignment", "-n", "3000", "-l", "3000", "-o",
                    str(alignment)], check=True)  # fmt: skip
    out = tmp_path / "out"
    out.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "seqcompare", "hamming", "--method", "vector", "--cluster",
                                "local", "--workers", "1", "-j", "1", "--tile-size", "3000", str(alignment), "--npy",
                                str(out / "d.npy")], stderr=subprocess.PIPE)  # fmt: skip
    # Shared-memory blocks carry the pid of the process that placed them: other tests running beside this one
    # (pytest -n) place their own.
    blocks = f"seqcompare-{process.pid}-"
    _wait_for(lambda: process.poll() is not None or any(p.startswith(blocks) for p in os.listdir("/dev/shm"))
              or leftovers(out))  # fmt: skip
    time.sleep(1.0)  # the workers are at work
    assert process.poll() is None
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    text = err.decode()
    assert process.returncode == 143, text
    assert "leaked" not in text and "Traceback" not in text
    assert os.listdir(out) == []
    # Semaphores that multiprocessing leaves are reported by its resource tracker as "leaked" (asserted above);
    # they cannot be told apart from those of other tests in /dev/shm.
    if os.path.isdir("/dev/shm"):
        assert [p for p in os.listdir("/dev/shm") if p.startswith(blocks)] == []


def test_parallel_gzip_writes_one_gzip_stream_whatever_the_threads(rng):
    """Pieces compressed by threads as gzip members of their own: the file decompresses to what was written, and
    its bytes do not depend on the thread count; writes of any size, across pieces or of whole pieces."""
    import gzip
    import io

    from seqcompare.io.output import ParallelGzipWriter

    data = rng.integers(0, 4, 20_000).astype(np.uint8).tobytes() + b"ACGT" * 3000
    cuts = sorted({0, len(data), *rng.integers(0, len(data), 40).tolist(), 5000, 5001, 9999})
    written = {}
    for threads in (1, 4):
        stream = io.BytesIO()
        with ParallelGzipWriter(stream, threads, piece_bytes=1000) as out:
            for a, b in zip(cuts[:-1], cuts[1:]):
                assert out.write(memoryview(data)[a:b]) == b - a
        written[threads] = stream.getvalue()
    assert written[1] == written[4] and gzip.decompress(written[1]) == data
    assert written[1].count(b"\x1f\x8b\x08") >= len(data) // 1000  # a member a piece
    stream = io.BytesIO()
    ParallelGzipWriter(stream, 2).close()  # nothing written: one empty member, still a gzip file
    assert gzip.decompress(stream.getvalue()) == b""
    stream = io.BytesIO()
    with pytest.raises(RuntimeError):
        with ParallelGzipWriter(stream, 2, piece_bytes=1000) as out:
            out.write(data[:500])
            raise RuntimeError("stop")
    assert stream.getvalue() == b""  # an error: what was left is not written


def test_a_signal_before_the_output_is_held_leaves_nothing(tmp_path, monkeypatch):
    # SIGTERM can arrive after a temporary .npy exists but before the reduction that made it holds it (CI saw it
    # inside the constructor): the command removes every unfinished temporary output on its way out.
    from seqcompare.cli import Interrupted

    def interrupted(*args, **kwargs):
        raise Interrupted(signal.SIGTERM)

    monkeypatch.setattr(np.lib.format, "open_memmap", interrupted)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["hamming", "-q", GOOD, "--npy", str(out / "d.npy")]) == 143
    assert os.listdir(out) == []


def test_a_signal_right_after_a_temporary_file_is_made_leaves_nothing(tmp_path, monkeypatch):
    # A signal that another thread receives runs its handler in the main thread between any two bytecodes, even
    # with the signals held there: once right after the temporary file was made and before it was recorded,
    # which left it behind (a fresh clone's CI). Here the handler's exception comes the moment the file exists.
    import seqcompare.io.output as output

    real_open = os.open

    def made_then_interrupted(path, *args, **kwargs):
        real_open(path, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(output.os, "open", made_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        output.PendingFile(tmp_path / "d.npy", suffix=".npy")
    monkeypatch.undo()
    assert len(os.listdir(tmp_path)) == 1
    output.remove_unfinished()
    assert os.listdir(tmp_path) == []


def test_a_background_writer_writes_in_order_and_gives_back_the_first_error():
    # BackgroundWriter (hamming -L formats a block row while the one before it is written): every write arrives,
    # in order; an error of the stream surfaces at the next write or at the end; an exception inside the block
    # drops what waits and goes through unchanged.
    import io

    from seqcompare.io.output import BackgroundWriter

    class Slow(io.BytesIO):
        def __init__(self, fail_at=None):
            super().__init__()
            self.calls, self.fail_at = 0, fail_at

        def write(self, data):
            self.calls += 1
            time.sleep(0.001)
            if self.calls == self.fail_at:
                raise OSError("disk full")
            return super().write(data)

    pieces = [np.full(k + 1, k % 256, np.uint8) for k in range(60)] + [b"end"]
    stream = Slow()
    with BackgroundWriter(stream) as out:
        for piece in pieces:
            assert out.write(piece) == len(piece)
    assert stream.getvalue() == b"".join(bytes(piece) for piece in pieces)
    with pytest.raises(OSError, match="disk full"):
        with BackgroundWriter(Slow(fail_at=5)) as out:
            for piece in pieces:
                out.write(piece)
    stream = Slow()
    with pytest.raises(KeyError):
        with BackgroundWriter(stream, depth=50) as out:
            for piece in pieces:
                out.write(piece)
            raise KeyError("interrupted")
    assert len(stream.getvalue()) < sum(len(piece) for piece in pieces)  # what waited was dropped

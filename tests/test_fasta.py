import gzip
import os

import numpy as np
import pytest

from seqcompare.errors import InputError
from seqcompare.io.fasta import FileRows, duplicated_names, read_alignment, read_sequences


def write(tmp_path, name, content: bytes):
    path = tmp_path / name
    path.write_bytes(content)
    return str(path)


def test_wrapped_crlf_gzip_and_names_up_to_whitespace(tmp_path):
    text = b">one first record\r\nACGT\r\nAC\r\n>two\tdesc\r\nTTTT\r\nGG\r\n"
    for path in (write(tmp_path, "a.fa", text), write(tmp_path, "a.fa.gz", gzip.compress(text))):
        aln = read_alignment(path)
        assert aln.names == ["one", "two"]
        assert aln.sequences.tobytes() == b"ACGTACTTTTGG"
        assert aln.sequences.shape == (2, 6)


def test_gzip_detected_by_content_not_name(tmp_path):
    path = write(tmp_path, "plain_name.fasta", gzip.compress(b">a\nAC\n>b\nAG\n"))
    assert read_alignment(path).sequences.tobytes() == b"ACAG"


def test_blank_lines_spaces_and_missing_final_newline(tmp_path):
    path = write(tmp_path, "a.fa", b"\n>a\nAC GT\n\n>b\nA-NN")
    aln = read_alignment(path)
    assert aln.sequences.tobytes() == b"ACGTA-NN"


def test_empty_sequences_are_allowed(tmp_path):
    aln = read_alignment(write(tmp_path, "a.fa", b">a\n>b\n"))
    assert aln.sequences.shape == (2, 0)


def test_real_crlf_alignment_parses():
    import os

    from conftest import DATA

    aln = read_alignment(os.path.join(DATA, "gene_515.fasta"))
    assert aln.sequences.shape == (515, 2829)
    assert not np.isin(aln.sequences, [10, 13]).any()


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "contains no FASTA records"),
        (b"\n\n  \n", "contains no FASTA records"),
        (b"ACGT\n>a\nAC\n", "not a FASTA file"),
        (b"@read\nACGT\n+\nIIII\n", "not a FASTA file"),
        (b">a\nACGT\n>b\nACG\n", "record #2 'b' has length 3 but record #1 'a' has length 4"),
        (b">a\nACG\n>b\nACGTT\n", "record #2 'b' has length 5 but record #1 'a' has length 3"),
        (b">a\nAC1T\n", "record #1 'a' has an illegal character '1' at position 3"),
        (b">a\nACGT\n>b\nAC\xffT\n", "record #2 'b' has an illegal character 'byte 0xff' at position 3"),
    ],
)
def test_bad_input_is_one_clear_message(tmp_path, content, message):
    path = write(tmp_path, "bad.fa", content)
    with pytest.raises(InputError) as info:
        read_alignment(path)
    assert message in str(info.value)
    assert path in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_alignment(str(tmp_path / "nope.fa"))
    with pytest.raises(InputError, match="is a directory"):
        read_alignment(str(tmp_path))


def test_truncated_gzip(tmp_path):
    data = gzip.compress(b">a\nACGT\n" * 1000)
    path = write(tmp_path, "t.fa.gz", data[: len(data) // 2])
    with pytest.raises(InputError, match="corrupt or truncated gzip"):
        read_alignment(path)


def test_duplicated_names():
    assert duplicated_names(["a", "b", "a", "c", "b", "a"]) == ["a", "b"]
    assert duplicated_names(["a", "b"]) == []


@pytest.fixture
def tiny_pieces(monkeypatch):
    """Cut every input into pieces of a few bytes, so the parallel scan meets every kind of boundary."""
    import seqcompare.io.fasta as fasta

    monkeypatch.setattr(fasta, "_PIECE_BYTES", 7)


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
@pytest.mark.parametrize("width", [0, 5, 64])
def test_parallel_pieces_read_the_same_alignment(tmp_path, rng, tiny_pieces, threads, width):
    from seqcompare.simulate import format_fasta

    sequences = np.frombuffer(b"ACGTN-acgt", dtype=np.uint8)[rng.integers(0, 10, (57, 131))]
    names = [f"r{i} description {i}" for i in range(57)]
    text = b"".join(format_fasta(names, sequences, width=width)).replace(b"\n", b"\r\n" if width == 5 else b"\n")
    aln = read_alignment(write(tmp_path, "a.fa", text), threads=threads)
    assert aln.names == [f"r{i}" for i in range(57)]
    assert np.array_equal(aln.sequences, sequences)


@pytest.mark.parametrize(
    "content, message",
    [
        (b">a\nACGT\n>b\nACGT\n>c\nAC\n>d\nA\n", "record #3 'c' has length 2 but record #1 'a' has length 4"),
        (b">a\nACGT\n>b\nACGT\n>c\nACGT\n>d\nA1GT\n>e\nA2\n", "record #4 'd' has an illegal character '1'"),
        (b">a\nAC\nGT\n>b\nACGTT\n", "record #2 'b' has length 5 but record #1 'a' has length 4"),
        (b">a\nA!GT\n>b\nAC\n", "record #1 'a' has an illegal character '!' at position 2"),
        (b"xx\n>a\nACGT\n>b\nAC\n", "not a FASTA file (byte 1"),
    ],
)
def test_parallel_pieces_report_the_first_error_in_file_order(tmp_path, tiny_pieces, content, message):
    path = write(tmp_path, "bad.fa", content)
    for threads in (1, 4):
        with pytest.raises(InputError) as info:
            read_alignment(path, threads=threads)
        assert message in str(info.value)


# -- small inputs: NumPy alone parses what is well formed, the compiled scan everything else ------------------


def random_fasta(rng) -> bytes:
    """FASTA text with the features both parsers must agree on: wrapping, CRLF, blank lines, spaces and tabs
    inside lines, gaps and marks, lower case, headers with descriptions, and now and then an illegal byte, a
    record of another length or text before the first record."""
    n, m = int(rng.integers(1, 6)), int(rng.integers(0, 40))
    letters = np.frombuffer(b"ACGTNacgtn-.*?RY", np.uint8)
    out = []
    if rng.random() < 0.05:
        out.append(b"stray text\n")
    for k in range(n):
        length = m + (int(rng.integers(1, 3)) if rng.random() < 0.05 else 0)
        sequence = letters[rng.integers(0, letters.size, length)].tobytes()
        if rng.random() < 0.05 and length:
            at = int(rng.integers(0, length))
            sequence = sequence[:at] + bytes([int(rng.choice([33, 0, 200, 62]))]) + sequence[at + 1 :]
        width = int(rng.integers(1, 50))
        lines = [sequence[i : i + width] for i in range(0, len(sequence), width)] or [b""]
        if rng.random() < 0.1:
            lines = [line[:2] + b" \t" + line[2:] for line in lines]
        end = b"\r\n" if rng.random() < 0.3 else b"\n"
        header = f">seq{k}{' some description' if rng.random() < 0.5 else ''}".encode()
        out.append(header + end + end.join(lines) + end + (end if rng.random() < 0.2 else b""))
    text = b"".join(out)
    return text[:-1] if rng.random() < 0.3 else text


def test_small_inputs_parse_exactly_as_the_compiled_scan_does(tmp_path, rng, monkeypatch):
    import seqcompare.io.fasta as fasta

    agreed = {"parsed": 0, "failed": 0}
    small = fasta.SMALL_BYTES  # before the loop below patches it
    for case in range(300):
        path = write(tmp_path, f"{case}.fa", random_fasta(rng))
        outcomes = []
        # NumPy where it can (in pieces of a few bytes to the whole file, each a thread's), then the compiled
        # scan alone (as if Numba were started, which sends large inputs there too)
        for small_bytes, piece_bytes, started in ((small, int(rng.choice([7, 64, 1 << 22])), False), (-1, 1, True)):
            monkeypatch.setattr(fasta, "SMALL_BYTES", small_bytes)
            monkeypatch.setattr(fasta, "_LINES_BYTES", piece_bytes)
            monkeypatch.setattr(fasta, "compiler_started", lambda started=started: started)
            try:
                alignment = read_alignment(path)
                outcomes.append(("ok", alignment.names, alignment.sequences.tobytes(), alignment.sequences.shape))
            except InputError as exc:
                outcomes.append(("error", str(exc)))
            for iupac_as_n in (False, True):  # unaligned sequences (any lengths) as base codes
                try:
                    found = read_sequences(path, iupac_as_n=iupac_as_n)
                    outcomes[-1] += ("ok", found.names, found.codes.tobytes(), found.offsets.tolist())
                except InputError as exc:
                    outcomes[-1] += ("error", str(exc))
        assert outcomes[0] == outcomes[1], path
        agreed["parsed" if outcomes[0][0] == "ok" else "failed"] += 1
    assert agreed["parsed"] > 150 and agreed["failed"] > 20


def test_well_formed_small_inputs_take_numpy_and_the_rest_the_compiled_scan():
    from seqcompare.io.fasta import _parse_sequences_well_formed, _parse_well_formed
    from seqcompare.io.sequences import code_table

    image = np.frombuffer(b">a x\r\nAC\r\nGT\r\n\r\n>b\nACGT", np.uint8)
    names, sequences = _parse_well_formed(image)
    assert names == ["a", "b"] and sequences.tobytes() == b"ACGTACGT"
    for irregular in (b">a\nAC GT\n", b">a\nACGT\n>b\nACG\n", b"x\n>a\nAC\n", b"", b">a\nA!\n"):
        assert _parse_well_formed(np.frombuffer(irregular, np.uint8)) is None, irregular
    # unaligned sequences: unequal lengths and empty records are well formed; IUPAC codes only when read as N
    names, codes, offsets = _parse_sequences_well_formed(np.frombuffer(b">a\nAC\nGU\n>b\n>c\nNY", np.uint8),
                                                         code_table(iupac_as_n=True))  # fmt: skip
    assert names == ["a", "b", "c"] and codes.tolist() == [0, 1, 2, 3, 4, 4] and offsets.tolist() == [0, 4, 4, 6]
    assert _parse_sequences_well_formed(np.frombuffer(b">c\nNY", np.uint8), code_table()) is None


# -- large inputs: the regular-layout parse (whole-line copies) must read exactly what the compiled scan reads ---


def regular_fasta(rng) -> bytes:
    """FASTA text whose records share one layout (one wrap width, the same line count), now and then broken the
    ways real files break it: CRLF, a blank line, a record wrapped differently or of another length, an illegal
    byte, whitespace or a '>' inside a sequence, text before the first record, no final newline, an empty
    sequence, one record only."""
    n = 1 if rng.random() < 0.1 else int(rng.integers(2, 9))
    m = 0 if rng.random() < 0.03 else int(rng.integers(1, 90))
    width = int(rng.integers(1, m + 2)) if rng.random() < 0.6 else max(m, 1)
    letters = np.frombuffer(b"ACGTNacgtn-.*?RY", np.uint8)
    sequences = [letters[rng.integers(0, letters.size, m)].tobytes() for _ in range(n)]
    widths = [width] * n
    flaw = rng.integers(0, 12) if rng.random() < 0.5 else -1
    victim = int(rng.integers(0, n))
    if flaw == 0 and m > 1:
        widths[victim] = max(1, width - 1)
    elif flaw == 1:
        sequences[victim] = sequences[victim] + b"A"
    elif flaw == 2 and m:
        at = int(rng.integers(0, m))
        sequences[victim] = sequences[victim][:at] + bytes([int(rng.choice([33, 0, 200, 32, 62, 9]))]) + sequences[
            victim][at + 1 :]  # fmt: skip
    records = []
    for k in range(n):
        lines = [sequences[k][i : i + widths[k]] for i in range(0, len(sequences[k]), widths[k])] or [b""]
        header = f">seq{k}{' description' if rng.random() < 0.5 else ''}".encode()
        records.append(b"\n".join([header, *lines]) + b"\n")
    if flaw == 3:
        records[victim] += b"\n"
    text = b"".join(records)
    if flaw == 4:
        text = text.replace(b"\n", b"\r\n")
    if flaw == 5:
        text = b"stray\n" + text
    if flaw == 6 or rng.random() < 0.2:
        text = text[:-1]
    return text


def test_large_inputs_of_one_layout_parse_exactly_as_the_compiled_scan_does(tmp_path, rng, monkeypatch):
    import seqcompare.io.fasta as fasta

    taken = {"regular": 0, "in_place": 0}
    regular = fasta._regular_layout

    def counted(image, threads, allocate, in_place=None):
        found = regular(image, threads, allocate, in_place)
        taken["regular"] += found is not None
        taken["in_place"] += found is not None and isinstance(found[1], FileRows)
        return found

    monkeypatch.setattr(fasta, "_regular_layout", counted)
    monkeypatch.setattr(fasta, "SMALL_BYTES", -1)
    agreed = {"parsed": 0, "failed": 0}
    for case in range(400):
        path = write(tmp_path, f"{case}.fa", regular_fasta(rng))
        outcomes = []
        # The regular layout first (copied, then left in place in the file), then the compiled scan alone.
        for regular_bytes, threads, in_place in ((-1, 1, False), (-1, 3, False), (-1, 3, True), (1 << 60, 1, False)):
            monkeypatch.setattr(fasta, "REGULAR_BYTES", regular_bytes)
            try:
                alignment = read_alignment(path, threads=threads, in_place=in_place)
                sequences = np.asarray(alignment.sequences)
                outcomes.append(("ok", alignment.names, sequences.tobytes(), sequences.shape))
            except InputError as exc:
                outcomes.append(("error", str(exc)))
        assert outcomes[0] == outcomes[1] == outcomes[2] == outcomes[3], path
        agreed["parsed" if outcomes[0][0] == "ok" else "failed"] += 1
    assert agreed["parsed"] > 200 and agreed["failed"] > 20
    assert taken["regular"] > 450  # three calls per parsed file of one layout
    assert taken["in_place"] > 50  # those of one line per sequence, left in place


def test_rows_in_place_pickle_as_their_file_and_refuse_a_changed_one(tmp_path, monkeypatch):
    import pickle

    import seqcompare.io.fasta as fasta

    monkeypatch.setattr(fasta, "SMALL_BYTES", -1)
    monkeypatch.setattr(fasta, "REGULAR_BYTES", 0)
    names = ["a", "bb", "ccc", "dddd", "e", "ff"]  # rows at uneven strides
    rows = ["ACGTN-", "acgtn?", "TTTTTT", "A.*CGT", "GGGGGG", "CCCCCA"]
    path = write(tmp_path, "in_place.fa", "".join(f">{n} x\n{r}\n" for n, r in zip(names, rows)).encode())
    alignment = read_alignment(path, in_place=True)
    assert isinstance(alignment.sequences, FileRows) and alignment.names == names
    assert alignment.n_sequences == 6 and alignment.length == 6
    expected = np.frombuffer("".join(rows).encode(), np.uint8).reshape(6, 6)
    np.testing.assert_array_equal(np.asarray(alignment.sequences), expected)
    np.testing.assert_array_equal(alignment.sequences[[4, 1]], expected[[4, 1]])
    with pytest.raises(ValueError, match="a copy"):
        np.asarray(alignment.sequences, copy=False)
    assert alignment.sequences.span(1, 3) == (len(">a x\nACGTN-\n>bb x\n"), len(">a x\nACGTN-\n>bb x\nacgtn?\n>ccc x\nTTTTTT"))
    copy = pickle.loads(pickle.dumps(alignment.sequences))
    assert isinstance(copy, FileRows)
    np.testing.assert_array_equal(np.asarray(copy), expected)
    data = pickle.dumps(alignment.sequences)
    assert len(data) < 1000  # the path and the offsets, not the bytes
    os.utime(path, ns=(1, 1))
    with pytest.raises(InputError, match="changed while it was being read"):
        pickle.loads(data)
    os.remove(path)
    with pytest.raises(InputError, match="removed while it was being read"):
        pickle.loads(data)
    # Wrapped lines, gzip, and files under the regular-layout size are read as arrays.
    wrapped = write(tmp_path, "wrapped.fa", b">a\nACG\nT\n>b\nCCG\nA\n")
    assert isinstance(read_alignment(wrapped, in_place=True).sequences, np.ndarray)
    packed = tmp_path / "g.fa.gz"
    packed.write_bytes(gzip.compress(b">a\nACGT\n>b\nCCGA\n"))
    assert isinstance(read_alignment(str(packed), in_place=True).sequences, np.ndarray)
    monkeypatch.setattr(fasta, "REGULAR_BYTES", 1 << 20)
    assert isinstance(read_alignment(wrapped, in_place=True).sequences, np.ndarray)


def test_regular_layout_refuses_what_it_cannot_copy_whole():
    from seqcompare.io.fasta import _regular_layout

    names, sequences = _regular_layout(np.frombuffer(b">a x\nACG\nTA\n>b\nCCG\nT-", np.uint8), 2)
    assert names == ["a", "b"] and sequences.tobytes() == b"ACGTACCGT-"
    for irregular in (b">a\nAC\nGT\n>b\nA\nCGT\n", b">a\nACGT\n>b\nACG\n", b">a\r\nAC\r\n", b">a\nA C\n",
                      b">a\nAC\n\n>b\nAC\n", b"x\n>a\nAC\n", b">a\n>b\n", b">a\nAC\n>AC\n", b">a\nA\nCG\n",
                      b">a\nAC\n>b\nAC\nTT\nGG\n"):  # fmt: skip
        assert _regular_layout(np.frombuffer(irregular, np.uint8), 1) is None, irregular


def test_line_ends_across_chunks_with_and_without_threads(rng):
    from concurrent.futures import ThreadPoolExecutor

    from seqcompare.io.fasta import _line_ends

    image = np.frombuffer(b"AC\n", np.uint8)[rng.integers(0, 3, (1 << 24) + 4099)]  # two chunks, a ragged end
    image[(1 << 24) - 1 : (1 << 24) + 1] = 10  # newlines either side of the chunk boundary
    expected = np.flatnonzero(image == 10).tolist() + ([image.size] if image[-1] != 10 else [])
    with ThreadPoolExecutor(3) as pool:
        assert _line_ends(image, pool).tolist() == expected
    assert _line_ends(image).tolist() == expected


def test_names_decoded_in_one_pass_equal_each_header_decoded_alone():
    """``header_words`` (one compiled pass, one decode) and ``_header_names`` (NumPy: each line cut at its first
    whitespace) against ``_decode_name`` per header, on headers of random whitespace, ASCII, UTF-8 and invalid
    bytes."""
    from seqcompare.io.fasta import _decode_name, _header_names, header_words

    rng = np.random.default_rng(4)
    alphabet = list(b" \t\x0b\x0c\rAZaz09_|:-") + [0xC3, 0xA9, 0xFF, 0x85, 0xE2, 0x82]
    spaced = 0
    for case in range(500):
        headers = [bytes(rng.choice(alphabet, int(rng.integers(0, 12)))) for _ in range(int(rng.integers(1, 6)))]
        if case % 2:  # no leading whitespace, which NumPy's cut leaves to _decode_name
            headers = [h.lstrip(b" \t\x0b\x0c\r") for h in headers]
            spaced += any(c in h for h in headers for c in b" \t\x0b\x0c\r")
        image = np.frombuffer(b"\n".join(headers), np.uint8)
        stops = np.cumsum([len(h) + 1 for h in headers]) - 1
        starts = stops - [len(h) for h in headers]
        expected = [_decode_name(h) for h in headers]
        assert header_words(image, starts, stops) == expected
        marked = np.frombuffer(b"\n".join(b">" + h for h in headers), np.uint8)  # as header lines: '>' first
        lines = np.cumsum([0] + [len(h) + 2 for h in headers])[:-1]
        assert _header_names(marked, lines, lines + 1 + [len(h) for h in headers], np.arange(len(headers))) == expected
    assert spaced > 100
    assert header_words(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64)) == []


def test_a_gzip_file_kept_while_it_is_read_twice(tmp_path, monkeypatch):
    """scan's read selection reads its samples twice: within keeping_contents a gzip file is inflated once, and
    a file changed meanwhile is read again."""
    import gzip
    import os

    from seqcompare.io import fasta

    path = tmp_path / "reads.fq.gz"
    path.write_bytes(gzip.compress(b"@a\nACGT\n+\nIIII\n"))
    inflated = []
    original = gzip.decompress
    monkeypatch.setattr(fasta.gzip, "decompress", lambda data: inflated.append(1) or original(data))
    with fasta.keeping_contents(str(path)):
        first = fasta.read_bytes(str(path))
        assert fasta.read_bytes(str(path)) is first and len(inflated) == 1
        path.write_bytes(gzip.compress(b"@b\nACGTT\n+\nIIIII\n"))
        os.utime(path, ns=(1, 1))  # another size and time: another file
        assert fasta.read_bytes(str(path)) == b"@b\nACGTT\n+\nIIIII\n" and len(inflated) == 2
    assert fasta.read_bytes(str(path)) == b"@b\nACGTT\n+\nIIIII\n" and len(inflated) == 3  # nothing kept after
    assert fasta._KEPT == {}

import gzip

import numpy as np
import pytest

from seqcompare.errors import InputError
from seqcompare.io.fasta import read_sequences
from seqcompare.io.fastq import read_fastq
from seqcompare.io.sequences import SequenceSet, code_table, record_sums, reverse_complement


def write(tmp_path, name, content: bytes):
    path = tmp_path / name
    path.write_bytes(content)
    return str(path)


def test_four_line_records_names_codes_and_phred(tmp_path):
    path = write(tmp_path, "a.fq", b"@r1 comment here\nACGTN\n+\n!+5?I\n@r2\nacgtu\n+r2\nIIIII\n")
    reads = read_fastq(path)
    assert reads.names == ["r1", "r2"]
    assert reads.codes.tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3, 3]
    assert reads.quality.tolist() == [0, 10, 20, 30, 40] + [40] * 5
    assert reads.offsets.tolist() == [0, 5, 10]
    assert reads.text(0) == "ACGTN"


@pytest.mark.parametrize("threads", [1, 3])
def test_wrapped_crlf_gzip_blank_lines_and_quality_lines_starting_with_at_or_plus(tmp_path, threads):
    text = b"@r1\r\nAC\r\nGT\r\n+\r\n@+\r\n+@\r\n\r\n@r2\nNNN\n+\n@@@\n@r3\n\n+\n\n"
    for path in (write(tmp_path, "a.fq", text), write(tmp_path, "a.fq.gz", gzip.compress(text))):
        reads = read_fastq(path, threads=threads)
        assert reads.names == ["r1", "r2", "r3"]
        assert reads.lengths.tolist() == [4, 3, 0]
        assert reads.quality[:4].tolist() == [31, 10, 10, 31]


def test_many_pieces_read_the_same(tmp_path, rng, monkeypatch):
    import seqcompare.io.fastq as fastq

    monkeypatch.setattr(fastq, "_PIECE_BYTES", 5)
    records, expected = [], []
    for i in range(40):
        seq = "".join(rng.choice(list("ACGTN"), int(rng.integers(0, 30))))
        qual = "".join(chr(33 + int(q)) for q in rng.integers(0, 42, len(seq)))
        records.append(f"@read{i}\n{seq}\n+\n{qual}\n")
        expected.append(seq)
    reads = read_fastq(write(tmp_path, "a.fq", "".join(records).encode()), threads=4)
    assert [reads.text(i) for i in range(40)] == expected


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "contains no FASTQ records"),
        (b"\n\n", "contains no FASTQ records"),
        (b">a\nACGT\n", "not a FASTQ file"),
        (b"@a\nACGT\n+\nIII\n", "record #1 'a' is truncated: 3 quality characters for 4 bases"),
        (b"@a\nACGT\n+\nIIIII\n", "record #1 'a' has 5 quality characters but 4 bases"),
        (b"@a\nACGT\n+\nIIII\n@b\nACGT\n", "record #2 'b' has no '+' line after its 4 bases"),
        (b"@a\nACGT\n@b\nAC\n+\nII\n", "record #1 'a' has no '+' line"),
        (b"@a\nACGT\n+\nIIII\n@b\nACXT\n+\nIIII\n", "record #2 'b' has 'X' at position 3"),
        (b"@a\nACRT\n+\nIIII\n", "record #1 'a' has 'R' at position 3, which is not A, C, G, T or N"),
        (b"@a\nACGT\n+\nII I\n", "record #1 'a' has quality character 'byte 0x20' at position 3"),
        (b"@a\nAC-T\n+\nIIII\n", "'-' at position 3"),
        # Wrapped records: the position counts across the lines (and a CR ends a line's letters).
        (b"@a\nACG\r\nTAXC\r\n+\nIIIIIII\n", "record #1 'a' has 'X' at position 6"),
        (b"@a\nACG\nTAGC\n+\nIII\nIIII\n@b\nAC\nGT\n+\nII\nI\x7f\n",
         "record #2 'b' has quality character 'byte 0x7f' at position 4"),
    ],
)
def test_bad_fastq_is_one_clear_message(tmp_path, content, message):
    path = write(tmp_path, "bad.fq", content)
    with pytest.raises(InputError) as info:
        read_fastq(path)
    assert message in str(info.value)
    assert path in str(info.value)
    assert "\n" not in str(info.value)


def test_iupac_codes_read_as_n_on_request(tmp_path):
    path = write(tmp_path, "a.fq", b"@a\nRYKMSWBDHVN\n+\nIIIIIIIIIII\n")
    assert read_fastq(path, iupac_as_n=True).codes.tolist() == [4] * 11


def test_missing_file_and_truncated_gzip(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_fastq(str(tmp_path / "nope.fq"))
    data = gzip.compress(b"@a\nACGT\n+\nIIII\n" * 1000)
    with pytest.raises(InputError, match="corrupt or truncated gzip"):
        read_fastq(write(tmp_path, "t.fq.gz", data[: len(data) // 2]))


def test_unaligned_fasta_records_of_any_length(tmp_path):
    path = write(tmp_path, "s.fa", b">one x\nAC GT\nnn\n>empty\n>two\r\nT\r\n")
    sigs = read_sequences(path)
    assert sigs.names == ["one", "empty", "two"]
    assert sigs.lengths.tolist() == [6, 0, 1]
    assert sigs.text(0) == "ACGTNN"
    with pytest.raises(InputError, match="record #2 'b' has 'Y' at position 2"):
        read_sequences(write(tmp_path, "bad.fa", b">a\nAC\n>b\nAYG\n"))
    assert read_sequences(write(tmp_path, "ok.fa", b">b\nAYG\n"), iupac_as_n=True).text(0) == "ANG"


def test_reverse_complement_and_record_sums():
    sigs = SequenceSet.from_strings(["ACGTN", "", "AAC"])
    out = np.empty_like(sigs.codes)
    reverse_complement(sigs.codes, sigs.offsets, out)
    assert SequenceSet(sigs.names, out, sigs.offsets).text(0) == "NACGT"
    assert SequenceSet(sigs.names, out, sigs.offsets).text(2) == "GTT"
    assert record_sums(np.array([1, 2, 3, 4], np.uint8), np.array([0, 2, 2, 4])).tolist() == [3, 0, 7]


def test_gpu_packing_layout_round_trips_on_the_cpu(rng):
    from seqcompare.scan.packed import pack_records, window_sums

    texts = ["".join(rng.choice(list("ACGTN"), int(n))) for n in (0, 1, 31, 32, 33, 64, 100)]
    records = SequenceSet.from_strings(texts)
    bases, nmask, word0 = pack_records(records.codes, records.offsets, threads=3)
    assert bases.size == nmask.size == 1 + sum((len(t) + 31) // 32 for t in texts)
    for r, text in enumerate(texts):
        for q, letter in enumerate(text):
            word, bit = word0[r] + q // 32, q % 32
            assert bool(nmask[word] >> np.uint32(bit) & np.uint32(1)) == (letter == "N")
            if letter != "N":
                assert int(bases[word] >> np.uint64(2 * bit) & np.uint64(3)) == "ACGT".index(letter)
        padding = (len(text) + 31) // 32 * 32
        for q in range(len(text), padding):
            assert nmask[word0[r] + q // 32] >> np.uint32(q % 32) & np.uint32(1)
    quality = np.arange(20, dtype=np.uint8)
    sums = window_sums(quality, np.array([0, 5, 20]), np.array([1, 0]), np.array([2, 0]), np.array([3, 5]))
    assert sums.tolist() == [7 + 8 + 9, 0 + 1 + 2 + 3 + 4]


def random_fastq(rng) -> bytes:
    """Small FASTQ texts, mostly plain four-line records, some wrapped, with CRLF, blank lines, bad bytes or
    lengths, or truncated."""
    out = []
    for k in range(int(rng.integers(0, 12))):
        length = int(rng.integers(0, 40))
        sequence = bytes(rng.choice(list(b"ACGTNacgtnU"), length).tolist())
        quality = bytes((33 + rng.integers(0, 45, length)).tolist())
        if rng.random() < 0.05 and length:
            sequence = sequence[:-1] + bytes([int(rng.choice([ord("X"), ord("R"), 32, ord("@")]))])
        if rng.random() < 0.05 and length:
            quality = quality[:-1] + bytes([int(rng.choice([32, 127, 10]))])
        if rng.random() < 0.05:
            quality = quality[: max(0, length - 1)] + (b"I" if rng.random() < 0.5 else b"")
        end = b"\r\n" if rng.random() < 0.2 else b"\n"
        lines = [f"@read{k}{' comment' if rng.random() < 0.3 else ''}".encode(), sequence, b"+", quality]
        if rng.random() < 0.1 and length > 3:  # wrapped
            lines = [lines[0], sequence[:3], sequence[3:], b"+", quality[:3], quality[3:]]
        out.append(end.join(lines) + end + (end if rng.random() < 0.05 else b""))
    text = b"".join(out)
    return text[:-1] if rng.random() < 0.2 else text


def test_small_plain_fastq_parses_exactly_as_the_compiled_passes(tmp_path, rng, monkeypatch):
    import seqcompare.io.fastq as fastq

    small = fastq.SMALL_BYTES  # before the loop below patches it
    outcomes_seen = set()
    for case in range(150):  # (the compiled passes are also held to the threaded plain reader below)
        path = write(tmp_path, f"{case}.fq", random_fastq(rng))
        outcomes = []
        for small_bytes in (small, -1):  # NumPy where it can, then the compiled passes alone
            monkeypatch.setattr(fastq, "SMALL_BYTES", small_bytes)
            for iupac_as_n in (False, True):
                try:
                    found = read_fastq(path, iupac_as_n=iupac_as_n, threads=2)
                    outcomes.append(("ok", found.names, found.codes.tolist(), found.quality.tolist(),
                                     found.offsets.tolist()))  # fmt: skip
                except InputError as exc:
                    outcomes.append(("error", str(exc)))
        assert outcomes[:2] == outcomes[2:], path
        outcomes_seen.add(outcomes[0][0])
    assert outcomes_seen == {"ok", "error"}
    assert fastq._parse_four_line_records(np.frombuffer(b"@a x\r\nAC\r\n+\r\nI#", np.uint8), code_table()) is not None


def test_records_packed_by_the_reader_read_and_select_as_the_plain_set(tmp_path, rng):
    # read_fastq(pack_into=...) checks and packs in one pass and writes no codes or qualities: its errors, its
    # packed words (decoded by NumPy) and whatever it translates later must equal the plain reader's.
    from conftest import unpack

    outcomes_seen = set()
    for case in range(100):
        path = write(tmp_path, f"{case}.fq", random_fastq(rng))
        iupac_as_n = case % 3 == 0
        try:
            plain = read_fastq(path, threads=2, iupac_as_n=iupac_as_n)
        except InputError as exc:
            with pytest.raises(InputError) as info:
                read_fastq(path, threads=2, pack_into=np.empty, iupac_as_n=iupac_as_n)
            assert str(info.value) == str(exc)
            outcomes_seen.add("error")
            continue
        outcomes_seen.add("ok")
        allocated = []
        kept = read_fastq(path, threads=2, iupac_as_n=iupac_as_n,
                          pack_into=lambda shape, dtype: allocated.append(dtype) or np.zeros(shape, dtype))  # fmt: skip
        assert allocated == [np.uint64, np.uint32] and kept.packed[1][-1] == 0xFFFFFFFF
        codes, offsets = unpack(*kept.packed, plain.lengths)
        assert codes.tolist() == plain.codes.tolist() and offsets.tolist() == plain.offsets.tolist()
        records = rng.permutation(len(plain))[: int(rng.integers(0, len(plain) + 1))]
        for chosen in (kept.select(records), plain.select(records)):
            assert list(chosen.names) == [plain.names[r] for r in records]
            assert chosen.codes.tolist() == [c for r in records for c in plain.sequence(r).tolist()]
            assert chosen.quality.tolist() == [q for r in records for q in
                                               plain.quality[plain.offsets[r] : plain.offsets[r + 1]].tolist()]  # fmt: skip
            assert chosen.lengths.tolist() == plain.lengths[records].tolist()
        assert list(kept.names) == list(plain.names) and len(kept) == len(plain)
        assert kept.codes.tolist() == plain.codes.tolist() and kept.quality.tolist() == plain.quality.tolist()
        assert [kept.text(r) for r in records[:3]] == [plain.text(r) for r in records[:3]]
    assert outcomes_seen == {"ok", "error"}
    with pytest.raises(ValueError, match="no alphabet"):
        read_fastq(path, pack_into=np.empty, alphabet=object())


@pytest.mark.parametrize("iupac_as_n", [False, True])
def test_letters_translate_by_arithmetic_as_by_the_code_table(iupac_as_n):
    from seqcompare.io.sequences import translate_dna_run

    table = code_table(iupac_as_n)
    for byte in range(256):
        text = np.array([ord("A")] * 40 + [byte] + [ord("t")] * 40, dtype=np.uint8)  # long enough to vectorise
        out = np.zeros(text.size, dtype=np.uint8)
        found = translate_dna_run(text, out, iupac_as_n)
        if table[byte] == 255:
            assert found == 40, byte
        else:
            assert found == -1 and out.tolist() == table[text].tolist(), byte


def test_codes_packed_eight_at_a_time_equal_the_numpy_decoding(rng):
    from conftest import unpack

    from seqcompare.io.sequences import pack_words

    lengths = np.array([0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 129, 300])
    word0 = np.concatenate([[0], np.cumsum((lengths + 31) // 32)[:-1]])
    bases = np.zeros(int(((lengths + 31) // 32).sum()), np.uint64)
    nmask = np.zeros(bases.size, np.uint32)
    records = []
    for r, length in enumerate(lengths):
        codes = rng.integers(0, 5, int(length)).astype(np.uint8)
        words = np.full((int(length) + 7) // 8 + 1, 0xFFFFFFFFFFFFFFFF, np.uint64)  # junk past the codes
        words.view(np.uint8)[: codes.size] = codes
        pack_words(words, int(length), int(word0[r]), bases.view(np.uint16), nmask.view(np.uint8))
        records.append(codes)
    codes, offsets = unpack(bases, nmask, word0, lengths)
    assert codes.tolist() == np.concatenate(records).tolist()
    assert offsets.tolist() == np.concatenate([[0], np.cumsum(lengths)]).tolist()
    padding = [int(nmask[word0[r] + lengths[r] // 32]) >> int(lengths[r] % 32) for r in range(lengths.size) if lengths[r] % 32]
    assert all(value == (1 << (32 - int(length % 32))) - 1 for value, length in zip(padding, lengths[lengths % 32 > 0]))


def plain_fastq(rng) -> bytes:
    """Four-line records, quality lines often starting with '@' or '+', sometimes one flaw that makes the file
    not plain (a wrapped line, a blank line, an empty sequence, a quality line of another length or with a
    newline-free bad byte) or a bad base, CRLF, and a last line with or without its newline."""
    out = []
    end = b"\r\n" if rng.random() < 0.2 else b"\n"
    for k in range(int(rng.integers(1, 30))):
        length = int(rng.integers(1, 90))
        sequence = bytes(rng.choice(list(b"ACGTNacgtn"), length).tolist())
        quality = bytes(rng.choice(list(b"@+I#!~5"), length).tolist())
        out.append(end.join([b"@r%d x" % k, sequence, b"+", quality]) + end)
    if rng.random() < 0.3:
        k = int(rng.integers(0, len(out)))
        header, sequence, plus, quality = out[k].split(end)[:4]
        flaw = int(rng.integers(0, 7))
        if flaw == 0 and len(sequence) > 2:
            out[k] = end.join([header, sequence[:2], sequence[2:], plus, quality]) + end
        elif flaw == 1:
            out[k] = end + out[k]
        elif flaw == 2:
            out[k] = end.join([header, b"", plus, b""]) + end
        elif flaw == 3:
            out[k] = end.join([header, sequence, plus, quality + b"I"]) + end
        elif flaw == 4:
            out[k] = end.join([header, sequence, plus, quality[:-1] + b" "]) + end
        elif flaw == 5:
            out[k] = end.join([header, sequence[:-1] + b"X", plus, quality]) + end
        else:
            out[k] = end.join([header, sequence, plus, quality[:1], quality[1:]]) + end
    text = b"".join(out)
    return text[: -len(end)] if rng.random() < 0.3 else text


def test_plain_records_found_by_threads_equal_the_general_passes(tmp_path, rng, monkeypatch):
    # Files of plain four-line records are read in runs by threads (their first records guessed, then checked);
    # anything else by the general passes. Both must give the same records, or the same error.
    import seqcompare.io.fastq as fastq

    general = {"taken": 0}
    plain_structure = fastq._plain_structure

    def counted(*args):
        found = plain_structure(*args)
        general["taken"] += found is None
        return found

    record_start_after = fastq._record_start_after

    def guessed_badly_at_times(raw, p):  # a run may start mid-record: it must be read again
        found = record_start_after(raw, p)
        return found if rng.random() < 0.5 else min(len(raw), found + int(rng.integers(1, 40)))

    monkeypatch.setattr(fastq, "SMALL_BYTES", -1)
    monkeypatch.setattr(fastq, "_PIECE_BYTES", 7)  # as many runs as the threads allow: guesses at every record
    monkeypatch.setattr(fastq, "_record_start_after", guessed_badly_at_times)
    outcomes_seen = set()
    for case in range(100):
        path = write(tmp_path, f"{case}.fq", plain_fastq(rng))
        outcomes = []
        for structure in (counted, lambda *args: None):
            monkeypatch.setattr(fastq, "_plain_structure", structure)
            try:
                found = read_fastq(path, threads=int(rng.integers(1, 5)))
                outcomes.append(("ok", list(found.names), found.codes.tolist(), found.quality.tolist(),
                                 found.offsets.tolist()))  # fmt: skip
                kept = read_fastq(path, threads=3, pack_into=np.empty)
                assert kept.codes.tolist() == found.codes.tolist()
            except InputError as exc:
                outcomes.append(("error", str(exc)))
        assert outcomes[0] == outcomes[1], path
        outcomes_seen.add(outcomes[0][0])
    assert outcomes_seen == {"ok", "error"}
    assert 0 < general["taken"] < 100  # of 200 reads: both ways were taken, the plain one mostly


@pytest.mark.parametrize("wrapped", [False, True])
def test_selected_records_are_copied_as_they_are_in_the_file(tmp_path, monkeypatch, wrapped):
    # Plain records are found by the threads (in runs of a few bytes here), wrapped ones by the general passes.
    import seqcompare.io.fastq as fastq
    from seqcompare.io.fastq import write_selected_records

    monkeypatch.setattr(fastq, "_PIECE_BYTES", 7)
    records = [b"@r%d c\nACGT%s\n+\n%s\n" % (k, b"\nAC" if wrapped and k == 3 else b"", b"@II@" + (b"\nII" if wrapped and k == 3 else b""))
               for k in range(9)]  # fmt: skip
    source = write(tmp_path, "s.fq", b"".join(records))
    selected = np.array([k % 3 == 1 for k in range(9)])
    hits, misses = tmp_path / "hits.fq", tmp_path / "misses.fq.gz"
    write_selected_records(source, selected, {("--matched-out", str(hits)): True, ("--unmatched-out", str(misses)): False},
                           threads=3)  # fmt: skip
    assert hits.read_bytes() == b"".join(r for r, s in zip(records, selected) if s)
    assert gzip.decompress(misses.read_bytes()) == b"".join(r for r, s in zip(records, selected) if not s)


@pytest.mark.parametrize("small_bytes", [None, -1])
def test_a_last_line_without_a_newline(tmp_path, monkeypatch, small_bytes):
    import seqcompare.io.fastq as fastq

    if small_bytes is not None:  # the compiled passes (they once read a phantom record after such a line)
        monkeypatch.setattr(fastq, "SMALL_BYTES", small_bytes)
    reads = read_fastq(write(tmp_path, "a.fq", b"@a\nACGT\n+\nIIII\n@b\nAC\n+\nII"))
    assert reads.names == ["a", "b"] and reads.offsets.tolist() == [0, 4, 6]


@pytest.mark.parametrize("iupac_as_n", [False, True])
def test_strings_translate_alike_by_threads_and_by_bytes_translate(rng, monkeypatch, iupac_as_n):
    from seqcompare.io import sequences
    from seqcompare.io.sequences import NumberedNames, SequenceSet

    texts = ["".join(rng.choice(list("ACGTNacgtnUuRy"), rng.integers(0, 400))) for _ in range(300)]

    monkeypatch.setattr(sequences, "ENCODE_PIECE_BYTES", 3000)  # about 15 records a piece

    def outcome(threaded_from):
        monkeypatch.setattr(sequences, "THREADED_TRANSLATE_BYTES", threaded_from)
        try:
            made = SequenceSet.from_strings(texts, NumberedNames("read", len(texts)), iupac_as_n=iupac_as_n)
        except InputError as error:
            return str(error)
        return made.codes.tolist(), made.offsets.tolist()

    # Illegal letters (R, y without iupac_as_n; '*' and a non-ASCII letter always) in one piece, in several, or
    # in none; bytes among the str.
    texts[40] = texts[40].encode()
    for bad_at in ([], [299], [5, 150], [150, 5], [77]):
        if bad_at == [77]:
            texts[77] = texts[77][:3] + "é" + texts[77][4:]
        for k in bad_at:
            texts[k] = texts[k] + "*"
        threaded, plain = outcome(0), outcome(1 << 40)
        assert threaded == plain
        assert isinstance(plain, str) == (bool(bad_at) or not iupac_as_n)
        for k in bad_at:
            texts[k] = texts[k][:-1]
    texts[:] = ["".join(rng.choice(list("ACGTNacgtnUu"), rng.integers(0, 400))) for _ in range(300)]
    threaded, plain = outcome(0), outcome(1 << 40)
    assert threaded == plain and not isinstance(plain, str)
    assert plain[0][:12] == [{"A": 0, "C": 1, "G": 2, "T": 3, "N": 4, "U": 3}[c.upper()] for c in "".join(texts)[:12]]


def test_strings_read_in_place_equal_a_plain_translation(rng, monkeypatch):
    """Large batches of ASCII str are translated where CPython holds their letters (io.sequences): equal to a
    letter-by-letter translation, with the same error for an illegal letter, and the same result where the
    in-place read does not apply or its per-string check fails."""
    import sys

    from seqcompare.io import sequences
    from seqcompare.io.sequences import NumberedNames, SequenceSet

    code = {"A": 0, "C": 1, "G": 2, "T": 3, "N": 4, "U": 3}
    texts = ["".join(rng.choice(list("ACGTNacgtnUu"), rng.integers(0, 400))) for _ in range(300)]
    texts[10], texts[11], texts[299] = "", "A", "t"  # empty, and one-letter strings (CPython's shared singletons)
    plain_codes = [code[c.upper()] for c in "".join(texts)]
    plain_offsets = np.cumsum([0] + [len(t) for t in texts]).tolist()
    monkeypatch.setattr(sequences, "THREADED_TRANSLATE_BYTES", 0)
    calls = {"in place": 0, "bytes": 0}
    for name, key in (("translate_in_place", "in place"), ("translate_bytes", "bytes")):
        kernel = getattr(sequences, name)
        monkeypatch.setattr(sequences, name, lambda *args, kernel=kernel, key=key: calls.__setitem__(
            key, calls[key] + 1) or kernel(*args))  # fmt: skip

    def outcome(items):
        calls.update({"in place": 0, "bytes": 0})
        try:
            made = SequenceSet.from_strings(items, NumberedNames("read", len(items)))
        except InputError as error:
            return str(error)
        return made.codes.tolist(), made.offsets.tolist()

    if sys.implementation.name == "cpython":
        assert sequences._str_layout() is not None
    assert outcome(texts) == (plain_codes, plain_offsets) and calls["in place"] > 0 and calls["bytes"] == 0
    for k, at in ((0, 0), (150, 7), (298, None)):  # an illegal letter: the same message as letter by letter
        bad = texts[:k] + [texts[k][:at] + "*" + texts[k][at:] if at is not None else texts[k] + "*"] + texts[k + 1 :]
        position = (at if at is not None else len(texts[k])) + 1
        assert outcome(bad) == (f"<array>: record #{k + 1} 'read{k + 1}' has '*' at position {position}, which is not "
                                "A, C, G, T or N (--iupac-as-n reads other IUPAC codes as N)")  # fmt: skip
    # Where the in-place read does not apply: non-ASCII text, bytes, a str subclass; the letters elsewhere.
    assert outcome(texts[:5] + ["ACé"] + texts[6:]).endswith("has '?' at position 3, which is not A, C, G, T or N "
                                                           "(--iupac-as-n reads other IUPAC codes as N)")  # fmt: skip
    assert calls == {"in place": 0, "bytes": calls["bytes"]} and calls["bytes"] > 0

    class Text(str):
        pass

    for odd in (texts[:7] + [texts[7].encode()] + texts[8:], texts[:7] + [Text(texts[7])] + texts[8:]):
        assert outcome(odd) == (plain_codes, plain_offsets) and calls["in place"] == 0
    # A per-string check that fails (the length read from the wrong field): every string is read otherwise.
    layout = sequences._str_layout()
    if layout is not None:
        wrong = sequences._StrLayout(layout.letters_at)
        wrong.length_at = 24  # the hash field
        monkeypatch.setattr(sequences, "_str_layout", lambda: wrong)
        assert outcome(texts) == (plain_codes, plain_offsets) and calls["in place"] > 0 and calls["bytes"] > 0
    monkeypatch.setattr(sequences, "_str_layout", lambda: None)  # another layout or another Python
    assert outcome(texts) == (plain_codes, plain_offsets) and calls["in place"] == 0


def bgzf(data: bytes, block: int = 65280) -> bytes:
    """``data`` as BGZF (the SAM specification, section 4.1): members of at most ``block`` bytes with a 'BC'
    extra field giving each member's size, then the empty end-of-file member, as bgzip writes it."""
    import zlib

    members = []
    for start in range(0, len(data), block):
        piece = data[start : start + block]
        deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
        body = deflate.compress(piece) + deflate.flush()
        members.append(b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff\x06\x00BC\x02\x00"
                       + (25 + len(body)).to_bytes(2, "little") + body
                       + zlib.crc32(piece).to_bytes(4, "little") + len(piece).to_bytes(4, "little"))  # fmt: skip
    members.append(bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000"))
    return b"".join(members)


def test_bgzf_is_inflated_by_threads_to_the_same_records(tmp_path, rng, monkeypatch):
    from seqcompare.io import fasta

    monkeypatch.setattr(fasta, "_BGZF_THREADS_FROM", 0)
    inflated = []
    original = fasta._inflate_blocks
    monkeypatch.setattr(fasta, "_inflate_blocks", lambda *a: inflated.append(1) or original(*a))
    records = []
    for r in range(400):
        n = int(rng.integers(1, 3000))
        records.append(b"@r%d x\n%s\n+\n%s\n" % (r, rng.choice(np.frombuffer(b"ACGTN", np.uint8), n).tobytes(),
                                                  rng.integers(33, 75, n).astype(np.uint8).tobytes()))  # fmt: skip
    content = b"".join(records)
    plain = read_fastq(write(tmp_path, "reads.fq", content))
    packed = bgzf(content, block=5000)
    assert gzip.decompress(packed) == content  # a gzip file to any reader
    got = read_fastq(write(tmp_path, "reads.fq.gz", packed), threads=3)
    assert inflated and got.names == plain.names
    assert np.array_equal(got.codes, plain.codes) and np.array_equal(got.quality, plain.quality)
    # A member that fails its CRC, a truncated file: one clear line, as for any gzip file.
    broken = bytearray(packed)
    second = packed.index(b"\x1f\x8b\x08\x04", 10)
    broken[second - 5] ^= 1  # the first member's CRC-32
    for bad in (bytes(broken), packed[:-40]):
        with pytest.raises(InputError, match="corrupt or truncated gzip data"):
            read_fastq(write(tmp_path, "bad.fq.gz", bad))


def test_letters_matrix_copies_strings_in_place_or_declines(rng, monkeypatch):
    """hamming's list-of-str input: equal-length ASCII strings copied by threads from where CPython keeps them,
    equal to joining their bytes; anything else is declined (None) and read the usual way."""
    from seqcompare.hamming.api import hamming
    from seqcompare.io import sequences

    monkeypatch.setattr(sequences, "THREADED_TRANSLATE_BYTES", 0)
    letters = np.frombuffer(b"ACGTNacgtn-RY?*", np.uint8)
    texts = [letters[rng.integers(0, letters.size, 257)].tobytes().decode() for _ in range(40)]
    joined = np.frombuffer("".join(texts).encode(), np.uint8).reshape(40, 257)
    got = sequences.letters_matrix(texts)
    if sequences._str_layout() is not None:
        assert got is not None and np.array_equal(got, joined)
        assert np.array_equal(sequences.letters_matrix(tuple(texts)), joined)
    for declined in (texts[:5] + [texts[5][:-1]] + texts[6:], texts[:5] + ["é" * 257] + texts[6:],
                     texts[:5] + [texts[5].encode()] + texts[6:], []):  # fmt: skip
        assert sequences.letters_matrix(declined) is None
    wrong = sequences._StrLayout(sequences._str_layout().letters_at) if sequences._str_layout() else None
    if wrong is not None:  # a per-string check that fails: declined, not trusted
        wrong.length_at = 24
        monkeypatch.setattr(sequences, "_str_layout", lambda: wrong)
        assert sequences.letters_matrix(texts) is None
        monkeypatch.undo()
        monkeypatch.setattr(sequences, "THREADED_TRANSLATE_BYTES", 0)
    in_place = hamming(texts)
    monkeypatch.setattr(sequences, "THREADED_TRANSLATE_BYTES", 1 << 40)  # declined: the strings joined
    assert np.array_equal(in_place, hamming(texts))
    with pytest.raises(InputError, match="sequence #6 has length 256 but sequence #1 has length 257"):
        hamming(texts[:5] + [texts[5][:-1]] + texts[6:])


def test_encoded_names_read_as_the_decoded_list(monkeypatch, capsys):
    """Names kept encoded (large FASTQ files) index, slice, iterate, compare and pickle as the list of decoded
    names; the duplicate check agrees with a set of them, also when every hash collides."""
    import pickle
    from concurrent.futures import ThreadPoolExecutor

    from seqcompare.cli.common import Log
    from seqcompare.io import sequences
    from seqcompare.io.fasta import _decode_name, header_names

    rng = np.random.default_rng(3)
    words = [b"r%d" % i for i in range(40)] + [b"", b"r\xc3\xa9", b"bad\xff", b"r7"]
    for unique in (True, False):
        chosen = words[:-1] if unique else words
        order = rng.permutation(len(chosen))
        text = b"".join(b"@" + chosen[i] + (b" comment\n" if i % 3 else b"\n") for i in order)
        image = np.frombuffer(text, np.uint8)
        ends = np.flatnonzero(image == 10)
        starts = np.r_[0, ends[:-1] + 1] + 1
        names = header_names(image, starts, ends)
        expected = [_decode_name(image[a:b].tobytes()) for a, b in zip(starts, ends)]  # header by header
        assert len(names) == len(expected) and names == expected and list(names) == expected
        with ThreadPoolExecutor(3) as pool:  # runs of headers on threads: the same bytes
            threaded = header_names(image, starts, ends, pool, 7)
        assert np.array_equal(threaded.blob, names.blob) and np.array_equal(threaded.starts, names.starts)
        assert [names[i] for i in range(-len(names), len(names))] == expected + expected
        assert names[3:-2:2] == expected[3:-2:2] and pickle.loads(pickle.dumps(names)) == expected
        assert names.has_duplicates() == (len(set(expected)) != len(expected)) == (not unique)
        with monkeypatch.context() as patched:  # every hash equal: the names themselves decide
            patched.setattr(sequences, "_name_hashes", lambda blob, starts, out: out.fill(7))
            assert header_names(image, starts, ends).has_duplicates() == (not unique)
        Log(quiet=False).duplicates("x.fq", header_names(image, starts, ends), "sample name")
        assert ("1 duplicated sample name(s): r7" in capsys.readouterr().err) == (not unique)
    empty = header_names(image, starts[:0], ends[:0])
    assert len(empty) == 0 and list(empty) == [] and not empty.has_duplicates()


def test_scan_writes_the_same_bytes_from_encoded_names(tmp_path, monkeypatch, capsys):
    """The compiled reader (large files) keeps names encoded; scan writes what it writes from the NumPy reader's
    list of names, duplicate warning included. (Other commands reach the names as a sequence too: align's
    all-against-all was checked the same way by hand, but compiles 8 s of kernels that this file has no other
    use for.)"""
    import seqcompare.io.fastq as fastq
    from seqcompare.cli import main

    rng = np.random.default_rng(9)
    genome = "".join(rng.choice(list("ACGT"), 60))
    names = [f"read{i}" for i in range(30)] + ["read3"]
    records = []
    for name in names:
        at = int(rng.integers(0, 140))
        bases = "".join(rng.choice(list("ACGT"), 200))
        bases = bases[:at] + genome + bases[at + 60 :]
        records.append(f"@{name} run=1\n{bases}\n+\n{'I' * len(bases)}\n")
    reads = write(tmp_path, "reads.fq", "".join(records).encode())
    signatures = write(tmp_path, "sig.fa", f">g\n{genome}\n".encode())
    outputs = []
    for small_bytes in (fastq.SMALL_BYTES, -1):
        monkeypatch.setattr(fastq, "SMALL_BYTES", small_bytes)
        scanned = tmp_path / f"scan{small_bytes}.tsv"
        assert main(["scan", reads, signatures, "--tsv", "-o", str(scanned)]) == 0
        warned = "1 duplicated sample name(s): read3" in capsys.readouterr().err
        outputs.append((scanned.read_bytes(), warned))
    assert outputs[0] == outputs[1] and outputs[0][1] and outputs[0][0].count(b"\n") == 32

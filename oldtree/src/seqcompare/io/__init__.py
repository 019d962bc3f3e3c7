"""Readers and writers of the file formats seqcompare consumes and produces."""

"""Exact virus-signature scanning of sequencing samples (``seqcompare scan``)."""

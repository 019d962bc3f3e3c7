"""Batched dynamic-programming scores: Needleman-Wunsch alignment (cost and score forms, linear or affine gaps,
edit distance) and dynamic time warping. :func:`seqcompare.align` and :func:`seqcompare.dtw` are the entry
points (``api``); ``reference`` holds the plain DP (the oracle), ``kernels`` the compiled batched CPU paths."""

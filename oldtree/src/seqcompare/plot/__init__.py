"""``seqcompare plot``: pictures of results. :func:`heatmap` draws a distance matrix, ordered so that close
sequences sit together (:func:`single_linkage_order`), with matplotlib (the optional ``[plot]`` extra).

- :mod:`.api`: :func:`heatmap`, :func:`read_matrix` (``.npy`` with its names, the table or PHYLIP outputs of
  ``seqcompare hamming``) and :func:`single_linkage_order`.
"""

from __future__ import annotations

from .api import heatmap, read_matrix, single_linkage_order

__all__ = ["heatmap", "read_matrix", "single_linkage_order"]

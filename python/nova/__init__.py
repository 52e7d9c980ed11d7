"""nova: exact Winograd (Cook-Toom) transforms and Winograd convolution that stays accurate in low precision.

Quick start::

    import nova
    t = nova.Transform("6,3", "0,±1,±2,±1/2,inf")
    ok, reason = t.verify()        # exact, in rational arithmetic
    t.AT, t.G, t.BT                # float64 numpy arrays, each entry the nearest double to the exact one
    t.exact("G")                   # exact entries as "p/q" strings

Errors in the input (bad points, tiles, files) raise ValueError with a one-line message.
"""

from ._nova import Transform, load_transform, max_points

__all__ = ["Transform", "load_transform", "max_points"]
__version__ = "0.1.0"

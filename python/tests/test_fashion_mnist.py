"""The IDX parser, on the real Fashion-MNIST files and on IDX bytes built here."""
import gzip
import importlib.util
import struct
from pathlib import Path

import numpy as np
import pytest

import fashion_mnist as fm

DEBIAN_READER = Path("/usr/share/doc/dataset-fashion-mnist/utils/mnist_reader.py")


def idx_bytes(arr: np.ndarray, code: int, be_dtype: str) -> bytes:
    return struct.pack(">HBB", 0, code, arr.ndim) + struct.pack(">" + "I" * arr.ndim, *arr.shape) + \
        arr.astype(be_dtype).tobytes()


@pytest.mark.parametrize("split,n", [("train", 60000), ("test", 10000)])
def test_real_files_shapes_and_labels(split, n):
    x, y = fm.load(split)
    assert x.shape == (n, 28, 28) and x.dtype == np.uint8
    assert y.shape == (n,) and y.dtype == np.int64
    # Fashion-MNIST is balanced: every one of the 10 classes has n/10 images (dataset documentation)
    assert np.bincount(y, minlength=10).tolist() == [n // 10] * 10
    # real images: dark background, bright objects, no constant image
    assert x.max() == 255 and x.min() == 0
    assert (x.reshape(n, -1).std(1) > 0).all()


def test_real_files_match_independent_reader():
    """Compare with the data set's own reader (shipped by the Debian package), which uses np.frombuffer
    with fixed offsets; ours parses the header."""
    if not DEBIAN_READER.exists():
        pytest.fail(f"{DEBIAN_READER} missing: apt-get install dataset-fashion-mnist")
    spec = importlib.util.spec_from_file_location("mnist_reader", DEBIAN_READER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ref_x, ref_y = mod.load_mnist(fm.DEFAULT_DIR, kind="t10k")
    x, y = fm.load("test")
    np.testing.assert_array_equal(x.reshape(len(x), -1), ref_x)
    np.testing.assert_array_equal(y, ref_y)


@pytest.mark.parametrize("code,be", [(0x08, "u1"), (0x09, "i1"), (0x0B, ">i2"), (0x0C, ">i4"),
                                     (0x0D, ">f4"), (0x0E, ">f8")])
def test_parse_all_types_roundtrip(code, be):
    rng = np.random.default_rng(code)
    arr = rng.integers(-100 if be != "u1" else 0, 100, size=(3, 4, 5)).astype(be)
    out = fm.parse_idx(idx_bytes(arr, code, be))
    assert out.shape == (3, 4, 5)
    np.testing.assert_array_equal(out, arr.astype(arr.dtype.newbyteorder("=")))


def test_gzip_and_plain_files(tmp_path):
    arr = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    raw = idx_bytes(arr, 0x08, "u1")
    (tmp_path / "a-idx3-ubyte").write_bytes(raw)
    (tmp_path / "b-idx3-ubyte.gz").write_bytes(gzip.compress(raw))
    np.testing.assert_array_equal(fm.read_idx_file(tmp_path / "a-idx3-ubyte"), arr)
    np.testing.assert_array_equal(fm.read_idx_file(tmp_path / "b-idx3-ubyte.gz"), arr)


@pytest.mark.parametrize("raw,msg", [
    (b"\x00", "too short"),
    (b"\x01\x00\x08\x01\x00\x00\x00\x01\x05", "bad magic"),
    (b"\x00\x00\x07\x01\x00\x00\x00\x01\x05", "unknown IDX type"),
    (b"\x00\x00\x08\x02\x00\x00\x00\x02", "truncated header"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x03\x01\x02", "needs"),
    (b"\x00\x00\x08\x00", "zero dimensions"),
])
def test_malformed_idx_is_rejected_clearly(raw, msg):
    with pytest.raises(fm.IDXError, match=msg):
        fm.parse_idx(raw)


def test_missing_data_says_how_to_install(tmp_path):
    with pytest.raises(FileNotFoundError, match="apt-get install -y dataset-fashion-mnist"):
        fm.load("test", root=tmp_path)
    with pytest.raises(ValueError, match="split"):
        fm.load("validation")

"""Fashion-MNIST loader: a small IDX parser written for nova (no torchvision).

The data come from the Debian package ``dataset-fashion-mnist``; its gzip'd IDX files land in
``/usr/share/datasets/fashion-mnist``. Override the folder with the ``NOVA_FASHION_MNIST_DIR``
environment variable or the ``root`` argument.

IDX format (http://yann.lecun.com/exdb/mnist/): big-endian header
    uint16 0, uint8 type code, uint8 number of dimensions, then one uint32 per dimension,
followed by the data in C order. Type codes: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
0x0D float32, 0x0E float64.
"""
from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path

import numpy as np

DEFAULT_DIR = "/usr/share/datasets/fashion-mnist"
INSTALL_HINT = (
    "Fashion-MNIST not found in {where}. Install it with\n"
    "    sudo apt-get update && sudo apt-get install -y dataset-fashion-mnist\n"
    "(Debian package; files land in /usr/share/datasets/fashion-mnist), or point "
    "NOVA_FASHION_MNIST_DIR at a folder holding the four *-idx?-ubyte[.gz] files."
)

FILES = {
    ("train", "images"): "train-images-idx3-ubyte",
    ("train", "labels"): "train-labels-idx1-ubyte",
    ("test", "images"): "t10k-images-idx3-ubyte",
    ("test", "labels"): "t10k-labels-idx1-ubyte",
}

CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
           "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot")

_DTYPES = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


class IDXError(ValueError):
    """Malformed IDX content."""


def parse_idx(raw: bytes, name: str = "<bytes>") -> np.ndarray:
    """Parse the bytes of one (already decompressed) IDX file into a numpy array."""
    if len(raw) < 4:
        raise IDXError(f"{name}: {len(raw)} bytes is too short for an IDX header")
    zero, code, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0:
        raise IDXError(f"{name}: bad magic, first two bytes are {zero:#06x}, expected 0x0000")
    if code not in _DTYPES:
        raise IDXError(f"{name}: unknown IDX type code {code:#04x}")
    if ndim == 0:
        raise IDXError(f"{name}: IDX with zero dimensions")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise IDXError(f"{name}: truncated header ({len(raw)} bytes, need {header})")
    dims = struct.unpack(">" + "I" * ndim, raw[4:header])
    dtype = _DTYPES[code]
    count = int(np.prod(dims, dtype=np.int64))
    need = header + count * dtype.itemsize
    if len(raw) != need:
        raise IDXError(f"{name}: {len(raw)} bytes but header {dims} of {dtype} needs {need}")
    arr = np.frombuffer(raw, dtype=dtype, count=count, offset=header).reshape(dims)
    return arr.astype(dtype.newbyteorder("="), copy=True)


def data_dir(root: str | os.PathLike | None = None) -> Path:
    return Path(root or os.environ.get("NOVA_FASHION_MNIST_DIR") or DEFAULT_DIR)


def _find(root: Path, stem: str) -> Path:
    for cand in (root / (stem + ".gz"), root / stem):
        if cand.is_file():
            return cand
    raise FileNotFoundError(INSTALL_HINT.format(where=f"{root} (looked for {stem}[.gz])"))


def read_idx_file(path: str | os.PathLike) -> np.ndarray:
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        raw = f.read()
    return parse_idx(raw, str(path))


def load(split: str = "test", root: str | os.PathLike | None = None):
    """Return (images uint8 [N,28,28], labels int64 [N]) for split 'train' or 'test'."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    root = data_dir(root)
    images = read_idx_file(_find(root, FILES[(split, "images")]))
    labels = read_idx_file(_find(root, FILES[(split, "labels")]))
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise IDXError(f"{root}: inconsistent shapes images {images.shape} labels {labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise IDXError(f"{root}: labels outside 0..9")
    return images, labels.astype(np.int64)


def to_float(images: np.ndarray, mean: float, std: float) -> np.ndarray:
    """uint8 [N,28,28] -> float32 [N,1,28,28], normalized."""
    x = images.astype(np.float32) / 255.0
    return ((x - mean) / std)[:, None, :, :]

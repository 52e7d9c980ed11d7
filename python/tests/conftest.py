import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see validation/train.py

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "validation"))

import torch  # noqa: E402

torch.set_num_threads(2)

import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see validation/train.py

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "validation"))

import torch  # noqa: E402

torch.set_num_threads(2)


def pytest_configure(config):
    # The tests that ask for int8 with tiles above 6 points (to check them against the harness or the
    # float64 reference) get the plan's accuracy caution as a RuntimeWarning each time: they asked for it.
    config.addinivalue_line("filterwarnings", r"ignore:nova\.ConvPlan. caution. int8 with F:RuntimeWarning")

"""The machine line printed above every benchmark and validation table (validation/machine.py) names the
CPU model, its cpuid family and model, and the CPU count, checked against /proc/cpuinfo read here
with regular expressions."""
import os
import re

import pytest

import machine


def _first(pattern):
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                m = re.fullmatch(pattern, line.rstrip("\n"))
                if m:
                    return m.group(1)
    except OSError:
        pass
    return None


def test_summary_names_model_family_and_cpus():
    s = machine.summary()
    assert f", {os.cpu_count()} logical CPUs, load average " in s
    name = _first(r"model name\s*:\s*(.*\S)\s*")
    if name is not None:
        assert s.startswith(name)
    family, model = _first(r"cpu family\s*:\s*(\S+)\s*"), _first(r"model\s*:\s*(\S+)\s*")
    if family is None or model is None:
        pytest.skip("/proc/cpuinfo gives no cpu family or model here")
    # "model" is its own key: "model name" must not be taken for it.
    assert f" (family {family} model {model}), " in s
    assert machine.cpu_family_model() == f" (family {family} model {model})"

"""What machine a result came from: every reported figure names it."""
import os
import platform


def _cpuinfo(keys):
    """The first value of each of `keys` in /proc/cpuinfo (a key must be whole: "model" is not "model
    name"), in one pass; absent keys are left out."""
    found = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, sep, value = line.partition(":")
                key = key.strip()
                if sep and key in keys and key not in found:
                    found[key] = value.strip()
                    if len(found) == len(keys):
                        break
    except OSError:
        pass
    return found


def _family_model(found) -> str:
    return f" (family {found['cpu family']} model {found['model']})" if "cpu family" in found and "model" in found else ""


def cpu_name() -> str:
    """The CPU model from /proc/cpuinfo, or platform.processor() where that file is absent."""
    return _cpuinfo(("model name",)).get("model name") or platform.processor()


def cpu_family_model() -> str:
    """The text " (family F model M)" from /proc/cpuinfo's cpuid fields, or "" where they are absent. A
    VM's model name can stand for hosts of different speed ("AMD EPYC" under KVM); these tell them apart."""
    return _family_model(_cpuinfo(("cpu family", "model")))


def summary() -> str:
    """The machine and its load now, for the first line of a benchmark's output (one read of /proc/cpuinfo)."""
    found = _cpuinfo(("model name", "cpu family", "model"))
    name = found.get("model name") or platform.processor()
    return f"{name}{_family_model(found)}, {os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.2f}"

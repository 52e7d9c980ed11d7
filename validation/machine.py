"""What machine a result came from: every reported figure names it."""
import os
import platform


def cpu_name() -> str:
    """The CPU model from /proc/cpuinfo, or platform.processor() where that file is absent."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def cpu_family_model() -> str:
    """" (family F model M)" from /proc/cpuinfo's cpuid fields, or "" where they are absent. A VM's model
    name can stand for hosts of different speed ("AMD EPYC" under KVM), which these tell apart."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, sep, value = line.partition(":")
                if not sep:
                    continue
                key = key.strip()
                if key in ("cpu family", "model") and key not in fields:
                    fields[key] = value.strip()
                if len(fields) == 2:
                    break
    except OSError:
        return ""
    if len(fields) < 2:
        return ""
    return f" (family {fields['cpu family']} model {fields['model']})"


def summary() -> str:
    """The machine and its load now, for the first line of a benchmark's output."""
    return f"{cpu_name()}{cpu_family_model()}, {os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.2f}"

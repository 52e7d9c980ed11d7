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


def summary() -> str:
    """The machine and its load now, for the first line of a benchmark's output."""
    return f"{cpu_name()} ({os.cpu_count()} logical CPUs), load average {os.getloadavg()[0]:.2f}"

"""What machine a result came from: every reported figure names it."""
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

"""Argument checks the validation and benchmark scripts share."""
import os


def require_writable(ap, option, path, keep=False, make_parents=False):
    """Ends the script through `ap.error` (exit 2) unless `path` can be written: checked before a long run,
    not after it. A file this check creates is removed again unless `keep` (scripts that append to it)."""
    if not path:
        return
    existed = os.path.exists(path)
    try:
        if make_parents:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "a"):
            pass
    except OSError as e:
        ap.error(f"{option}: cannot write {str(path)!r}: {e.strerror}")
    if not existed and not keep:
        os.remove(path)


def require_archs(ap, text):
    """Ends the script through `ap.error` unless every name of the comma-separated --arch is a network."""
    import models
    for arch in text.split(","):
        if arch not in models.ARCHS:
            ap.error(f"unknown --arch {arch!r}; choose from {', '.join(models.ARCHS)}")


def require_at_least(ap, *checks):
    """Each check is (option, value, lowest): ends the script through `ap.error` where a value given is below
    its lowest (None: not given)."""
    for option, value, lowest in checks:
        if value is not None and value < lowest:
            ap.error(f"{option} must be {lowest} or more, got {value}")

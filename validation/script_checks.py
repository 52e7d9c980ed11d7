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

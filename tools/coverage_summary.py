"""Per-file line coverage from gcovr's JSON, with the instantiations of a template line merged: gcovr
lists each instantiation as its own line, so a line that ran in one and not in another (a kernel
template for two data types) would count as uncovered. Prints the files with uncovered lines, most
first, and their uncovered line ranges.

    .venv/bin/python tools/coverage_summary.py build-cov/coverage.json [--all]
"""
import argparse
import collections
import json


def ranges(lines):
    out = []
    for n in lines:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ",".join(f"{a}-{b}" if a != b else str(a) for a, b in out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="gcovr --json output")
    ap.add_argument("--all", action="store_true", help="list fully covered files too")
    args = ap.parse_args()
    with open(args.json) as f:
        files = json.load(f)["files"]
    rows, total, covered = [], 0, 0
    for entry in files:
        counts = collections.defaultdict(int)
        for line in entry["lines"]:
            counts[line["line_number"]] = max(counts[line["line_number"]], line["count"])
        missed = sorted(n for n, c in counts.items() if c == 0)
        total += len(counts)
        covered += len(counts) - len(missed)
        rows.append((len(missed), len(counts), entry["file"], missed))
    rows.sort(key=lambda r: (-r[0], r[2]))
    print(f"lines covered: {covered} of {total} ({100 * covered / max(total, 1):.1f} %), {len(rows)} files")
    for missed, count, name, lines in rows:
        if missed or args.all:
            print(f"{missed:5d} of {count:5d} uncovered  {name}  {ranges(lines)}")


if __name__ == "__main__":
    main()

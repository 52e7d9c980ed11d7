"""Test of the oneDNN peer's error check (ctest peer_onednn_check): the figures that bench/peer_bench.py
prints next to nova's come from nova_peer_onednn --check, so it must measure what it says.

On small layers with odd sizes and channel counts that are not multiples of 16 (oneDNN's blocked layouts
pad them), the error of oneDNN's output against the peer's float64 reference must be at FP32's level for
FP32 (a misread layout or a wrong reference gives O(1)), above FP32's and below 1e-2 for bf16 (bf16 really
used: its input rounding alone costs ~1e-3), and below 2e-2 for int8 on both of its inputs (the bias in
the sum's units: oneDNN 2.x scales after adding it; getting that wrong costs O(1)). On kernels without VNNI
or AMX, the u8 check quantizes the weights to 7 bits, as oneDNN's int8 guide asks: with 8-bit weights their
int16 pair sums saturate (measured on jit_uni_int8:avx2: 5.9e-2 with 8-bit weights, 4.6e-3 with 7).

  python3 check_peer_onednn.py path/to/nova_peer_onednn
"""
import json
import os
import subprocess
import sys


def run(exe, shape, algorithm, dtype):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([exe, "--shape", shape, "--algorithm", algorithm, "--dtype", dtype, "--repeat", "1", "--check"],
                       capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0:
        sys.exit(f"{exe} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def main():
    # One argument, an executable: without it this said IndexError, and a wrong path FileNotFoundError
    # from deep in subprocess.
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit("usage: check_peer_onednn.py path/to/nova_peer_onednn")
    exe = sys.argv[1]
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        sys.exit(f"check_peer_onednn.py: {exe} is not an executable file (build nova_peer_onednn first)")
    failures = []

    def expect(what, value, low, high):
        ok = value is not None and low <= value < high
        print(f"{what}: {value} ({'ok' if ok else 'outside'} [{low:g}, {high:g}))")
        if not ok:
            failures.append(what)

    for shape in ("2,24,9,11,20", "1,32,14,14,48"):
        for algorithm in ("direct", "winograd"):
            o = run(exe, shape, algorithm, "f32")
            if o.get("created"):
                expect(f"{shape} f32 {algorithm} ({o['impl']})", o.get("rel_l2_error"), 0.0, 2e-6)
        o = run(exe, shape, "direct", "bf16")
        if o.get("created"):
            expect(f"{shape} bf16 direct ({o['impl']})", o.get("rel_l2_error"), 2e-4, 1e-2)
        for algorithm in ("direct", "winograd"):
            o = run(exe, shape, algorithm, "int8")
            if not o.get("created"):
                continue
            checks = [k for k in ("check_s8", "check_u8") if k in o]
            if not checks:
                failures.append(f"{shape} int8 {algorithm}: no check ({o.get('check_why')})")
            for k in checks:
                expect(f"{shape} int8 {algorithm} {k} ({o[k]['impl']})", o[k]["rel_l2_error"], 1e-4, 2e-2)
    if failures:
        sys.exit("failed: " + "; ".join(failures))


if __name__ == "__main__":
    main()

# Sourced at the start of every device run: unpacks the binaries built on the development machine
# (.dev/bundle.tar.xz: nova, nova_peer_onednn, the test programs, nova_bench_gemm and the Debian 12
# shared libraries they need) into build/, and points /work/main at this checkout, since the tests were
# compiled with NOVA_SOURCE_DIR=/work/main and NOVA_CLI_PATH=/work/main/build/nova.
R=$PWD
O=${OUT:-/tmp/out}
mkdir -p "$O" /work build
ln -sfn "$R" /work/main
tar -xJf .dev/bundle.tar.xz -C build
export LD_LIBRARY_PATH=$R/build/lib

# Every test program at once (16 cores), brief output; the logs joined into $O/$1 and each program's
# PASSED / FAILED lines and exit status printed.
run_tests() {
  local t name rc
  for t in build/tests/nova_tests_*; do
    [ -x "$t" ] || continue  # a build tree's CTest files beside the programs
    name=$(basename "$t")
    (timeout 240 "$t" --gtest_brief=1 > "/tmp/$name.log" 2>&1; rc=$?; echo "== $name exit $rc" >> "/tmp/$name.log") &
  done
  wait
  cat /tmp/nova_tests_*.log > "$O/$1"
  grep -h "^== \|PASSED\|FAILED" /tmp/nova_tests_*.log
}

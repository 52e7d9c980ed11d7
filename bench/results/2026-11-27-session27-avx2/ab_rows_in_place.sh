#!/bin/bash
# usage: ab_rows.sh reps old new ; alternates binaries per layer
reps=$1; old=$2; new=$3
layers=("1,3,224,224,64 --kernel 7 --stride 2" "1,3,224,224,64" "1,3,224,224,32 --stride 2" "8,3,32,32,64" "1,8,56,56,256" "1,10,28,28,512" "1,4,112,112,128 --kernel 7 --stride 2" "1,3,224,224,16")
for l in "${layers[@]}"; do
  for r in $(seq $reps); do
    for b in old new; do
      bin=$old; [ $b = new ] && bin=$new
      t=$($bin bench conv --shape $l --layout nhwc --threads 2 --algorithm direct --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["median_ms"])')
      echo "$l|$b|$t"
    done
  done
done

# Which power-of-two balance of B^T's rows gives fp16 the widest usable input range?
# Usage: python3 balance_targets.py JSON_DIR [path/to/nova]
#   JSON_DIR holds the default transforms 4,3.json 6,3.json 8,3.json as `nova transform --format json`
#   writes them (the commands are in fp16_range.sh).
import json, subprocess, math, sys, tempfile
from fractions import Fraction as F
nova = sys.argv[2] if len(sys.argv) > 2 else 'build/nova'
defaults = {t: f'{sys.argv[1]}/{t}.json' for t in ('4,3', '6,3', '8,3')}
scratch = tempfile.mkdtemp()
def pow2_floor(x):  # largest 2^k <= x
    k = math.floor(math.log2(x))
    while F(2)**k > x: k -= 1
    while F(2)**(k+1) <= x: k += 1
    return k
def make(tile, target):
    d = json.load(open(defaults[tile]))
    BT = [[F(v) for v in row] for row in d['BT']]
    d1 = [F(v) for v in d['scaling']['D1']]; d2 = [F(v) for v in d['scaling']['D2']]
    for p, row in enumerate(BT):
        l1 = sum(abs(v) for v in row); l2 = math.sqrt(sum(float(v)**2 for v in row))
        if target == 'geo':
            val = F(math.sqrt(float(l1) * l2))
            k = pow2_floor(val)          # bring sqrt(L1 L2) into [1, 2)
        else:
            k = pow2_floor(l1) - target  # bring L1 into [2^t, 2^(t+1))
        d1[p] = d1[p] * F(2)**k          # B^T row divided by d1 d2: row * 2^-k
    spec = 'd1=' + ','.join(str(x) for x in d1) + ';d2=' + ','.join(str(x) for x in d2)
    out = f'{scratch}/{tile}-{target}.json'
    subprocess.run([nova, 'transform', '--tile', tile, '--points', ','.join(d['points']), '--scaling', spec,
                    '--format', 'json', '-o', out], check=True)
    return out
def err(path, arith, rng):
    r = subprocess.run([nova, 'bench', 'conv', '--shape', '1,64,28,28,64', '--dtype', 'fp16', '--threads', '1',
                        '--repeat', '1', '--check', '--format', 'json', '--transform', path, '--fp16-arith', arith,
                        '--lowp-kernel', 'portable', '--data-range', str(rng)], capture_output=True, text=True, check=True)
    e = json.loads(r.stdout)['rel_l2_error']
    return float('inf') if e is None else e
ranges = [1e-4, 3e-4, 1e-3, 1, 1000, 4000, 16000]
print('tile target arith ' + ' '.join(f'{r:>8g}' for r in ranges))
for tile in defaults:
    for target in ['orig', 0, 1, 2, 3, 'geo']:
        path = defaults[tile] if target == 'orig' else make(tile, target)
        for arith in ['fp32', 'fp16']:
            print(f'{tile} {str(target):>4} {arith} ' + ' '.join(f'{err(path, arith, r):8.3g}' for r in ranges), flush=True)

#!/usr/bin/env bash
# Between-process spread of the chain stream path's device time, graphcert against nvbench:
# ROUNDS fresh processes of each, interleaved. Needs a GPU and cuda-bench on PYTHONPATH.
# graphcert's figure is the median over its buffer placements (bench --placements, default 4).
#   bash benchmarks/spread_vs_nvbench.sh [ROUNDS]
set -euo pipefail
rounds=${1:-4}
for _ in $(seq "$rounds"); do
  python3 -m graphcert bench chain --size 1 --no-certificate --json --timeout 2 | python3 -c "
import json, sys
r = json.load(sys.stdin)['runs'][0]['results']['sizes'][0]
p = r.get('placements') or {}
spread = lambda side: p.get(side, {}).get('device', {}).get('rel_range')
print('graphcert stream %.4f us/kernel  graph %.4f us/node  (median of %s placements; spread '
      'over placements stream %s graph %s)' % (
    r['stream']['device']['median_s'] / 16 * 1e6, r['graph']['device']['median_s'] / 16 * 1e6,
    len(p.get('stream', {}).get('device', {}).get('medians_s', [1])),
    *(('%.2f%%' % (100 * spread(s)) if spread(s) is not None else '-') for s in ('stream', 'graph'))))"
  python3 benchmarks/fidelity_probe.py --one nvbench default 16 | tail -1 | python3 -c "
import json, sys
d = json.loads(sys.stdin.read())
print('nvbench   stream %.4f us/kernel  graph %.4f us/node' % (
    d['stream']['mean_us'], d['graph']['mean_us']))"
done

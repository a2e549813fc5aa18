#!/usr/bin/env bash
# Between-process spread of the chain stream path's device time, graphcert against nvbench:
# ROUNDS fresh processes of each, interleaved (16-kernel chain, L2 cleared). Needs a GPU and
# cuda-bench on PYTHONPATH. graphcert's figure is the median over its buffer placements
# (bench --placements, default 8), each after the first in a new primary context
# (--placement-contexts, default new). Prints each process's figures, then each tool's range
# between processes as a share of its median (target: graphcert's stream range no wider
# than nvbench's in the same run).
#   [PLACEMENTS=8] [CONTEXTS=new|same] bash benchmarks/spread_vs_nvbench.sh [ROUNDS]
set -euo pipefail
rounds=${1:-4}
here=$(cd "$(dirname "$0")" && pwd)
figures=$(mktemp)
trap 'rm -f "$figures"' EXIT
for _ in $(seq "$rounds"); do
  python3 -m graphcert bench chain --size 1 --no-certificate --json --timeout 2 --placements "${PLACEMENTS:-8}" \
      --placement-contexts "${CONTEXTS:-new}" | python3 -c "
import json, sys
r = json.load(sys.stdin)['runs'][0]['results']['sizes'][0]
p = r.get('placements') or {}
spread = lambda side: p.get(side, {}).get('device', {}).get('rel_range')
stream, graph = r['stream']['device']['median_s'] / 16 * 1e6, r['graph']['device']['median_s'] / 16 * 1e6
print('graphcert stream %.4f us/kernel  graph %.4f us/node  (median of %s placements in %s '
      'contexts; spread over placements stream %s graph %s)' % (
    stream, graph, len(p.get('stream', {}).get('device', {}).get('medians_s', [1])),
    (r.get('contexts') or {}).get('count', 1),
    *(('%.2f%%' % (100 * spread(s)) if spread(s) is not None else '-') for s in ('stream', 'graph'))))
per = [m / 16 * 1e6 for m in p.get('stream', {}).get('device', {}).get('medians_s', [])]
print(json.dumps({'tool': 'graphcert', 'stream': stream, 'graph': graph,
                  'stream_placements': per}), file=open('$figures', 'a'))"
  python3 "$here/fidelity_probe.py" --one nvbench default 16 | tail -1 | python3 -c "
import json, sys
d = json.loads(sys.stdin.read())
print('nvbench   stream %.4f us/kernel  graph %.4f us/node' % (
    d['stream']['mean_us'], d['graph']['mean_us']))
print(json.dumps({'tool': 'nvbench', 'stream': d['stream']['mean_us'],
                  'graph': d['graph']['mean_us']}), file=open('$figures', 'a'))"
done
python3 "$here/spread_summary.py" "$figures"

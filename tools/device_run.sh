#!/usr/bin/env bash
# The device-tool recording run (benchmarks/NOTES.md): run from the repository root on the
# device machine with the wheels of igraph, texttable, cxxfilt and jsonschema (and its
# dependencies; cuda-bench for the fidelity steps) in .whl/, and COMMIT set to the commit the
# tree is (the device's .git is stale, so certificates would say dirty otherwise).
# Steps: verify, steps, bench:W (every default), sweep (chain over kernels=1,10,100,1000),
# profile, plan:skewed and plan:wide (with the model check), record
# (the example's good run, torch.compile's and the planted ones),
# fidelity:K (against nvbench at K kernels), native (the native loop over 8 placements),
# repeat (two processes), methods, pvb, poverhead, native1 and ptests (the profile's replay
# times and tracing cost), tier1 and tier2 (the GPU tier in two halves), py:FILE (python3 FILE, its output in $OUT/FILE's name.log), archive (the certificates so far into $OUT/rec.tgz), tier. Logs and the certificates' archive go under $OUT.
#   COMMIT=$(git rev-parse HEAD) bash tools/device_run.sh verify steps bench:chain sweep tier
set -u
# The device's .git is the session's first commit, not this tree's: certificates name the
# commit COMMIT says, so a call without it would record the wrong one.
[ -n "${COMMIT:-}" ] || { echo "device_run.sh: set COMMIT to the commit this tree is (git rev-parse HEAD here)" >&2; exit 2; }
python3 -m pip install -q --no-index --no-deps --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 9
# CUPTI (cupti-python, nvidia-cuda-cupti, pyelftools) in a folder of its own: installed over
# /tmp/site its nvidia/ namespace could shadow the NVRTC wheel's (DEVICE_FACTS.md).
CUPTI_LIB=${CUPTI_LIB:-cupti134}
python3 -m pip install -q --no-index --no-deps --no-cache-dir --upgrade --target /tmp/cupti .whl/cupti/*.whl .whl/$CUPTI_LIB/*.whl || exit 9
export PYTHONPATH=.:/tmp/site:/tmp/cupti PYTHONUNBUFFERED=1 GRAPHCERT_GIT_COMMIT=$COMMIT GRAPHCERT_GIT_DIRTY=0
mkdir -p $OUT/rec
{ nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; echo "commit $COMMIT"; git status --short | head; } > $OUT/env.log 2>&1
T0=$(date +%s)
for step in "$@"; do
  start=$(date +%s)
  # GLOBAL_LIMIT: no step starts after this many seconds (the archive still runs), so a call
  # under the device tool's limit brings its files back
  if [ $(( start - T0 )) -gt ${GLOBAL_LIMIT:-100000} ] && [ "$step" != archive ]; then
    echo "$step skipped: past GLOBAL_LIMIT" | tee -a $OUT/steps_done.log; continue
  fi
  case $step in
    verify) timeout 120 bash tools/record_on_gpu.sh verify $OUT/rec > $OUT/verify.log 2>&1; rc=$? ;;
    steps) timeout 300 env PYTHON=python3 bash tools/record_steps.sh $OUT/rec > $OUT/steps.log 2>&1; rc=$? ;;
    bench:*) w=${step#bench:}; timeout 120 python3 -m graphcert bench $w --out $OUT/rec >> $OUT/bench.log 2>&1; rc=$? ;;
    # The sweep fits a + b*kernels over three orders of magnitude: its 1,000-kernel host loops
    # take milliseconds a sample and jitter by tens of percent (8.5-10.5% half-widths after
    # 10 s a figure on an H100), so its host-clock target is 10% and each figure has 10 s.
    sweep) timeout 240 python3 -m graphcert bench chain --sweep kernels=1,10,100,1000 --timeout 10 --max-host-noise 0.1 --out $OUT/rec >> $OUT/bench.log 2>&1; rc=$? ;;
    fidelity:*) timeout 200 python3 benchmarks/fidelity_vs_nvbench.py --kernels ${step#fidelity:} >> $OUT/fidelity.log 2>&1; rc=$? ;;
    native) timeout 200 python3 benchmarks/native_in_process.py --placements 8 >> $OUT/fidelity.log 2>&1; rc=$? ;;
    repeat) timeout 120 python3 benchmarks/repeatability.py >> $OUT/fidelity.log 2>&1; rc=$? ;;
    # profile certificates of the built-ins and the PyTorch step (twice: the second
    # into $OUT/base, a baseline for the gate's node rules)
    profile) timeout 180 python3 -m graphcert profile chain scan converge examples/steps/torch_decode.py:DECODE --out $OUT/rec >> $OUT/profile.log 2>&1; rc=$?
             timeout 180 python3 -m graphcert profile chain scan converge examples/steps/torch_decode.py:DECODE --out $OUT/rec/base >> $OUT/profile.log 2>&1 || rc=$? ;;
    # plans of torch_decode for the two example traffic mixes, and their model check
    plan:*) mix=${step#plan:}; top=$([ "$mix" = wide ] && echo 256 || echo 64); d=$OUT/plan-$mix
            timeout 200 python3 -m graphcert plan examples/steps/torch_decode.py:DECODE --traffic examples/traffic/$mix.csv --current vllm:$top --out $d >> $OUT/plan.log 2>&1; rc=$?
            for f in $d/plan-*.json; do timeout 120 python3 benchmarks/plan_replay_check.py --certificate $f >> $OUT/plan.log 2>&1 || rc=$?; cp $f $OUT/rec/; done ;;
    # the record example's good run, and the planted --fallback / --recapture runs
    # (tests/fixtures/record/) with the gate over them (it fails them: exit 1)
    record) timeout 60 python3 -m graphcert record --out $OUT/rec -- python3 examples/record/serve_torch.py >> $OUT/record.log 2>&1; rc=$?
            timeout 120 python3 -m graphcert record --out $OUT/rec -- python3 examples/record/compile_torch.py >> $OUT/record.log 2>&1 || rc=$?
            timeout 60 python3 -m graphcert record --out $OUT/rec/planted -- python3 examples/record/serve_torch.py --fallback >> $OUT/record.log 2>&1 || rc=$?
            timeout 60 python3 -m graphcert record --out $OUT/rec/planted -- python3 examples/record/serve_torch.py --recapture 500 >> $OUT/record.log 2>&1 || rc=$?
            timeout 30 python3 -m graphcert gate $OUT/rec/planted --policy examples/record/policy.toml >> $OUT/record.log 2>&1; echo "planted gate exit $?" >> $OUT/record.log ;;
    # record -- COMMAND: the injection collector built (and its paths printed), the native
    # example built beside its source (ignored by git), the multi-process and native runs
    # for reports/, streams kept for tests/fixtures/streams/, the record GPU tests, overhead
    collector) timeout 120 python3 -m graphcert.injection > $OUT/collector.log 2>&1; rc=$?
               timeout 120 nvcc -O2 -arch=sm_90 -o examples/record/native_server examples/record/native_server.cu >> $OUT/collector.log 2>&1 || rc=$? ;;
    record2) timeout 90 python3 -m graphcert record --out $OUT/rec -- python3 examples/record/serve_torch.py --engine-process >> $OUT/record.log 2>&1; rc=$?
             timeout 90 python3 -m graphcert record --out $OUT/rec -- python3 examples/record/serve_torch.py --workers 2 >> $OUT/record.log 2>&1 || rc=$?
             timeout 60 python3 -m graphcert record --out $OUT/rec --source examples/record/native_server.cu -- examples/record/native_server >> $OUT/record.log 2>&1 || rc=$? ;;
    streams) S=$OUT/rec/streams; mkdir -p $S
             timeout 90 python3 -m graphcert record --keep-streams $S/engine_fallback --out $S/engine_fallback -- python3 examples/record/serve_torch.py --engine-process --fallback --steps 300 >> $OUT/record.log 2>&1; rc=$?
             timeout 60 python3 -m graphcert record --keep-streams $S/native_fork --out $S/native_fork --source examples/record/native_server.cu -- examples/record/native_server --fork 2 --fallback --steps 300 >> $OUT/record.log 2>&1 || rc=$?
             GRAPHCERT_FLUSH_MS=1 timeout 60 python3 -m graphcert record --keep-streams $S/native_killed --out $S/native_killed --source examples/record/native_server.cu -- examples/record/native_server --fork 2 --kill-self-at 1500 --steps 2000 >> $OUT/record.log 2>&1; echo "native_killed exit $?" >> $OUT/record.log ;;
    overhead) timeout ${OVERHEAD_LIMIT:-400} python3 benchmarks/record_overhead.py ${OVERHEAD_ARGS:-} > $OUT/overhead.log 2>&1; rc=$? ;;
    rtests) timeout ${TIER_LIMIT:-360} python3 -m pytest -q -m gpu tests/gpu/test_injection_gpu.py tests/gpu/test_record_processes_gpu.py tests/gpu/test_record_gpu.py -p no:cacheprovider -rs --timeout 200 > $OUT/rtests.log 2>&1; rc=$? ;;
    # the profile's replay-time table (benchmarks/NOTES.md): every way of timing a replay,
    # profile against bench, tracing's cost, the native loop (settled, fresh, L2 cleared)
    methods) timeout ${METHODS_LIMIT:-200} python3 benchmarks/replay_methods.py ${METHODS_ARGS:-} > $OUT/methods.log 2>&1; rc=$? ;;
    pvb) { timeout 120 python3 benchmarks/profile_vs_bench.py; timeout 120 python3 benchmarks/profile_vs_bench.py --no-flush-l2; } > $OUT/pvb.log 2>&1; rc=$? ;;
    poverhead) timeout ${POVERHEAD_LIMIT:-200} python3 benchmarks/profile_overhead.py ${POVERHEAD_ARGS:-} > $OUT/poverhead.log 2>&1; rc=$? ;;
    native1) mkdir -p build/native && nvcc -O2 -std=c++17 -arch=sm_90 benchmarks/native_graph_loop.cu -o build/native/native_graph_loop > $OUT/native1.log 2>&1
             for extra in "" --fresh --flush-l2; do echo "native_graph_loop $extra" >> $OUT/native1.log; timeout 60 build/native/native_graph_loop $extra --nodes 1000,16 --samples 300 >> $OUT/native1.log 2>&1; done; rc=$? ;;
    # span mode's certificates (tests/fixtures/profile/span/): GRAPH_TRACE alone, the replay's
    # device span and its distortion, for the built-ins and the PyTorch step
    span) timeout 180 python3 -m graphcert profile --span chain 'chain[kernels=1000]' scan converge examples/steps/torch_decode.py:DECODE --out $OUT/rec/span > $OUT/span.log 2>&1; rc=$? ;;
    ptests) timeout ${TIER_LIMIT:-300} python3 -m pytest -q -m gpu tests/gpu/test_profile*.py -p no:cacheprovider -rs --timeout 200 > $OUT/ptests.log 2>&1; rc=$? ;;
    py:*) f=${step#py:}; timeout ${PY_LIMIT:-240} python3 $f > $OUT/$(basename $f .py).log 2>&1; rc=$? ;;
    archive) tar czf $OUT/rec.tgz -C $OUT rec; rc=$? ;;  # what is recorded so far comes back
    # the tier in two halves, each well inside one call (the whole took over 330 s at 93ab9a1)
    tier1) timeout ${TIER_LIMIT:-360} python3 -m pytest -q -m gpu tests/gpu/test_[a-p]*.py -p no:cacheprovider -rs --timeout 200 > $OUT/tier1.log 2>&1; rc=$? ;;
    tier2) timeout ${TIER_LIMIT:-360} python3 -m pytest -q -m gpu tests/gpu/test_[q-z]*.py -p no:cacheprovider -rs --timeout 200 > $OUT/tier2.log 2>&1; rc=$? ;;
    tier) timeout ${TIER_LIMIT:-360} python3 -m pytest -q -m gpu tests/gpu -p no:cacheprovider -rs --timeout 300 > $OUT/tier.log 2>&1; rc=$? ;;
  esac
  echo "$step rc=$rc $(( $(date +%s) - start )) s" | tee -a $OUT/steps_done.log
done
tar czf $OUT/rec.tgz -C $OUT rec && rm -rf $OUT/rec
# at most 8 files come back: every log but the step list and the tier's in one archive
( cd $OUT && ls *.log >/dev/null 2>&1 && tar czf logs.tgz *.log && find . -maxdepth 1 -name '*.log' ! -name steps_done.log ! -name 'tier*.log' -delete )
tail -4 $OUT/tier.log 2>/dev/null

#!/usr/bin/env bash
# The benchmarks quoted in README.md and the package READMEs, one after the
# other (never side by side with each other: they share the machine's cores).
# Each line is the command the figures came from. About 23 minutes on 2 cores.
#   scripts/bench.sh            all of them
#   scripts/bench.sh sim sink   only these packages
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

PKGS=" $* "
[ $# -eq 0 ] && PKGS=" sim sink attack whole replay reports harness "
run() { echo; echo "\$ $*"; "$@"; }
for p in $PKGS; do
  case $p in
  sim)
    run $GO test ./sim/ -run '^$' -bench . -benchmem -benchtime 20000x ;;
  sink)
    # At the default Ps and with one spare P, as the msgload binary runs (cmd/msgload/procs.go).
    # Ingest: callers on net/http's client; IngestLean: callers that write raw HTTP/1.1 (less of the cores to the caller).
    run $GO test ./sink/ -run '^$' -bench 'Ingest(Lean)?/(bare|sink-batch)$' -benchtime 60000x -cpu "$(nproc),$(( $(nproc) + 1 ))"
    run $GO test ./sink/ -run '^$' -bench 'Handler' -benchtime 100000x
    run env MSGLOAD_SINK_MEM_EVENTS=${MSGLOAD_SINK_MEM_EVENTS:-10000000} $GO test ./sink/ -run '^$' -bench Memory -benchtime 1x -timeout 30m ;;
  attack)
    run env MSGLOAD_BENCH_RATES=1000,4000,max MSGLOAD_BENCH_SECONDS=4 MSGLOAD_BENCH_REPEAT=3 \
      $GO test ./attack -run '^$' -bench '^BenchmarkVersusVegeta$' -benchtime 1x -timeout 30m
    run env MSGLOAD_BENCH_RATES=none MSGLOAD_BENCH_MEMORY=100000,1000000 \
      $GO test ./attack -run '^$' -bench '^BenchmarkVersusVegeta$' -benchtime 1x -timeout 30m ;;
  whole)
    # The whole `msgload run` process (a messaging scenario, delivery: none) against `vegeta attack`.
    run env MSGLOAD_BENCH_WHOLE_RATES=5000,max MSGLOAD_BENCH_PAIRS=9 MSGLOAD_BENCH_WHOLE_SECONDS=5 \
      $GO test ./attack -run '^$' -bench '^BenchmarkRunVersusVegeta$' -benchtime 1x -timeout 30m ;;
  replay)
    run $GO test ./replay -run '^$' -bench 'BenchmarkReplayPacing|BenchmarkPacerVsConstant' -benchtime 2x ;;
  reports)
    run $GO test ./reports -run '^$' -bench 'Analyze(1k|100k|None100kLive)$' -benchtime 3x -benchmem
    # A delivery-none run analysed in bounded memory (issue 23); MSGLOAD_BENCH_MESSAGES=18000000 for an hour at 5000/s.
    run env MSGLOAD_BENCH_MESSAGES=${MSGLOAD_BENCH_MESSAGES:-1000000} $GO test ./reports -run '^$' -bench '^BenchmarkAnalyzeNoneBounded$' -benchtime 1x -timeout 60m
    # The same with callbacks (a DELIVERED callback a message, 1% lost, 2% duplicated).
    run env MSGLOAD_BENCH_MESSAGES=${MSGLOAD_BENCH_MESSAGES:-1000000} $GO test ./reports -run '^$' -bench '^BenchmarkAnalyzeCallbacks$' -benchtime 1x -timeout 60m
    # The same with the embedded simulator's ground truth (truth.jsonl streamed).
    run env MSGLOAD_BENCH_MESSAGES=${MSGLOAD_BENCH_MESSAGES:-1000000} $GO test ./reports -run '^$' -bench '^BenchmarkAnalyzeTruth$' -benchtime 1x -timeout 60m ;;
  harness)
    # How soon abortOnFail stops a run once its threshold can no longer pass (issue 23): 200/s,
    # crossed at about 50 s; MSGLOAD_BENCH_ABORT_RATE=1000 MSGLOAD_BENCH_ABORT_BOUND=54000 for minute 8 at 1,000/s.
    run env MSGLOAD_BENCH_ABORT_RATE=${MSGLOAD_BENCH_ABORT_RATE:-200} MSGLOAD_BENCH_ABORT_BOUND=${MSGLOAD_BENCH_ABORT_BOUND:-1000} \
      $GO test ./harness -run '^$' -bench '^BenchmarkAbortLag$' -benchtime 1x -timeout 30m ;;
  *)
    echo "bench.sh: unknown package $p (sim, sink, attack, whole, replay, reports, harness)" >&2; exit 2 ;;
  esac
done

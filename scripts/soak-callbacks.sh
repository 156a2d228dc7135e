#!/usr/bin/env bash
# soak-callbacks.sh: the run process's memory with callbacks (issue 23's goal:
# peak RSS grows < 10 bytes a message from 1 to 10 minutes).
#
# `msgload run` of scripts/callbacks-1000.yaml — the embedded simulator, the
# embedded sink, every message called back: attacker, simulator, sink and the
# end's report in one process, the live analysis (checkpoints) in a child
# process of it (harness/livechild.go) — at RATE/s for each of DURATIONS
# seconds, each REPEAT times (one run a length does not settle a few bytes a
# message: two runs of one length have lain 8–18 MB apart). For each run it
# prints the peak RSS (/usr/bin/time: the largest of the process and any
# child it waited for), the process's own VmHWM, the most the process and
# its children held together (VmRSS summed, and Pss summed: the executable's
# pages counted once) and when (sampled every SAMPLE_EVERY s, default 1;
# the live analyses' spans in WORK/analyses-D-I), the peak live heap
# (GODEBUG=gctrace=1: MB marked live at each GC of the run's process), the
# messages planned and sent, the sends capped and late, how far the
# simulator fell behind (truth.sim_lag.max), the verdict and the load at the
# start; then for each length the median of its runs that held their plan,
# and the growth of those medians in bytes a message from the first length
# to each later one. A run that did not hold its plan (sends capped, more
# than 1 % late, the simulator 1 s or more behind, or no verdict pass) is no
# valid point: marked so and left out of the medians.
#
#   scripts/soak-callbacks.sh                      60, 150 and 600 s at 1,000/s (~15 min)
#   REPEAT=3 DURATIONS="60 150" scripts/soak-callbacks.sh
#
# Environment: RATE (1000), DURATIONS ("60 150 600"), REPEAT (1), SAMPLE_EVERY (1), MSGLOAD (a
# built binary; default: go build into WORK), WORK (a directory for the run
# directories and logs; default: a new temporary one). Needs /usr/bin/time
# and jq. Run it on an idle machine: a run that shares the cores with other
# work does not hold its plan.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/memsample.sh
RATE=${RATE:-1000}
DURATIONS=${DURATIONS:-"60 150 600"}
REPEAT=${REPEAT:-1}
WORK=${WORK:-$(mktemp -d /tmp/soak-callbacks.XXXXXX)}
mkdir -p "$WORK"
BIN=${MSGLOAD:-$WORK/msgload}
if [ ! -x "$BIN" ]; then
  ${GO:-go} build -o "$BIN" ./cmd/msgload
fi

# scenario D: scripts/callbacks-1000.yaml at RATE for D seconds.
scenario() {
  sed -e "s|rate: [0-9]*/s|rate: $RATE/s|" -e "s|duration: [0-9]*s|duration: $1s|" scripts/callbacks-1000.yaml
}

# gc_peak LOG: the largest heap marked live at a GC (MB).
gc_peak() {
  grep -o '[0-9]*->[0-9]*->[0-9]* MB' "$1" | sed 's/.*->\([0-9]*\) MB/\1/' | sort -n | tail -1
}

# one D I: the I-th run of D seconds; appends its figures to $WORK/figures.
one() {
  local d=$1 i=$2 tag=$1s-$2 dir=$WORK/runs-$1s-$2
  rm -rf "$dir"; mkdir -p "$dir"
  scenario "$d" > "$WORK/cb-$d.yaml"
  local load
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  run_sampled "$WORK/rss-$tag" "$WORK/vmrss-$tag" "$WORK/run-$tag.log" "$WORK/gc-$tag.log" \
    "$BIN" run "$WORK/cb-$d.yaml" --out "$dir" --metrics-addr "" --quiet
  local sum
  sum=$(ls "$dir"/*/summary.json 2>/dev/null | head -1)
  if [ -z "$sum" ]; then
    echo "soak-callbacks: the $tag run left no summary.json: see $WORK/run-$tag.log and $WORK/gc-$tag.log" >&2
    return 1
  fi
  local when hwm trss tpss
  read -r hwm trss tpss when < <(tree_peaks "$WORK/vmrss-$tag")
  child_spans "$WORK/vmrss-$tag" > "$WORK/analyses-$tag"
  jq -r --arg d "$d" --arg i "$i" --arg rss "$(tail -1 "$WORK/rss-$tag")" --arg when "${when:--}" \
    --arg live "$(gc_peak "$WORK/gc-$tag.log")" --arg load "$load" --arg hwm "${hwm:-0}" --arg trss "${trss:-0}" --arg tpss "${tpss:-0}" \
    '[$d, $i, $rss, $when, $live, .requests.planned_messages, .requests.messages,
      (.requests.capped // 0), (.requests.late // 0), (.truth.sim_lag.max // 0), .verdict, $load, $hwm, $trss, $tpss] | @tsv' "$sum" >> "$WORK/figures"
}

: > "$WORK/figures"
for d in $DURATIONS; do
  for i in $(seq "$REPEAT"); do
    one "$d" "$i"
  done
done

echo "# msgload run, callbacks on the embedded simulator, ${RATE}/s; $WORK"
awk -F'\t' 'BEGIN { OFS = "\t"; print "s", "run", "peak RSS KiB", "own HWM KiB", "tree RSS KiB", "tree PSS KiB", "tree peak at s", "live MB", "planned", "sent", "capped", "late", "sim lag s", "verdict", "valid point", "load at start" }
{
  ok = ($8 == 0 && $9 <= $7 / 100 && $10 < 1 && $11 == "pass")
  print $1, $2, $3, $13, $14, $15, $4, $5, $6, $7, $8, $9, $10, $11, ok ? "yes" : "no: plan not held", $12
}' "$WORK/figures" | column -t -s $'\t'
echo "# medians of the valid runs of each length; growth from the first length, in bytes a message sent"
awk -F'\t' '
function median(list,   n, a, i, j, t) {
  n = split(list, a, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
($8 == 0 && $9 <= $7 / 100 && $10 < 1 && $11 == "pass") {
  if (!($1 in rss)) order[++k] = $1
  rss[$1] = rss[$1] " " $3; live[$1] = live[$1] " " $5; sent[$1] = sent[$1] " " $7; runs[$1]++
  tree[$1] = tree[$1] " " $14; pss[$1] = pss[$1] " " $15
}
END {
  OFS = "\t"; print "s", "valid runs", "median peak RSS KiB", "median tree RSS KiB", "median tree PSS KiB", "median live MB", "median sent", "RSS B/msg", "tree RSS B/msg", "tree PSS B/msg", "live B/msg"
  for (x = 1; x <= k; x++) {
    d = order[x]; r = median(rss[d]); l = median(live[d]); s = median(sent[d]); tr = median(tree[d]); tp = median(pss[d])
    g1 = g2 = g3 = g4 = "-"
    if (x > 1 && s > s0) {
      g1 = sprintf("%.1f", (r - r0) * 1024 / (s - s0)); g2 = sprintf("%.1f", (l - l0) * 1048576 / (s - s0))
      g3 = sprintf("%.1f", (tr - tr0) * 1024 / (s - s0)); g4 = sprintf("%.1f", (tp - tp0) * 1024 / (s - s0))
    }
    if (x == 1) { r0 = r; l0 = l; s0 = s; tr0 = tr; tp0 = tp }
    print d, runs[d], r, tr, tp, l, s, g1, g3, g4, g2
  }
}' "$WORK/figures" | column -t -s $'\t'
echo "# within each run of 180 s or more: the process and its children together (Pss, KiB) at their most while a checkpoint ran, in the first minute from 60 s with one seen and in the last minute of sending, and the growth between in bytes a message sent"
{
  printf 's\trun\tfrom s\tPss then\tPss last minute\tB/msg\n'
  for d in $DURATIONS; do
    for i in $(seq "$REPEAT"); do
      [ -f "$WORK/vmrss-$d""s-$i" ] && printf '%s\t%s\t%s\n' "$d" "$i" "$(within "$WORK/vmrss-$d""s-$i" "$d" "$RATE" | tr ' ' '\t')"
    done
  done
} | column -t -s $'\t'

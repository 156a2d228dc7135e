# memsample.sh: sourced by the soak scripts.
#
# sample_tree PID FILE: every SAMPLE_EVERY seconds (default 1) while PID
# lives, a line of seconds since the start, the process's VmRSS and VmHWM,
# and the VmRSS and Pss of it and its children together (KiB). A run's live
# analysis runs in a child process (harness/livechild.go), so the run's
# memory is the tree's; Pss shares the executable's pages the two map between
# them, the VmRSS sum counts them twice. Three programs a look (pgrep and
# two awk), so that the sampler takes little of the cores the run needs.
sample_tree() {
  local start=${EPOCHREALTIME/./} every=${SAMPLE_EVERY:-1}
  while kill -0 "$1" 2>/dev/null; do
    local kids line
    kids=$(pgrep -P "$1" | sed 's|.*|/proc/&/status|' | tr '\n' ' ' || true)
    # a child gone between pgrep and awk, or a zombie, has no VmRSS: counted 0
    line=$(awk -v own="/proc/$1/status" '/^VmRSS/ { t += $2; if (FILENAME == own) r = $2 } /^VmHWM/ && FILENAME == own { h = $2 }
      END { print r + 0, h + 0, t + 0 }' "/proc/$1/status" $kids 2>/dev/null || true)
    local pss
    pss=$(awk '/^Pss:/ { t += $2 } END { print t + 0 }' "/proc/$1/smaps_rollup" ${kids//status/smaps_rollup} 2>/dev/null || echo 0)
    local tenths=$(((${EPOCHREALTIME/./} - start) / 100000))
    [ -n "$line" ] && [ "${line%% *}" != 0 ] && echo "$((tenths / 10)).$((tenths % 10)) $line ${pss:-0}" >> "$2"
    sleep "$every"
  done
}

# run_sampled RSS TREE LOG ERR CMD...: runs CMD under GODEBUG=gctrace=1 and
# /usr/bin/time (its peak RSS into RSS), standard output into LOG and
# standard error (the gctrace) into ERR, sampling it and its children into
# TREE (sample_tree) until it ends; its failure is the run's to report.
run_sampled() {
  local rss=$1 tree=$2 log=$3 err=$4
  shift 4
  : > "$tree"
  GODEBUG=gctrace=1 /usr/bin/time -f '%M' -o "$rss" "$@" > "$log" 2> "$err" &
  local tpid=$! pid=""
  for _ in $(seq 50); do
    pid=$(pgrep -P "$tpid" | head -1 || true)
    [ -n "$pid" ] && break
    sleep 0.1
  done
  [ -n "$pid" ] && sample_tree "$pid" "$tree"
  wait "$tpid" || true
}

# tree_peaks FILE: the most of each column of sample_tree's FILE — "HWM
# treeRSS treePSS atSeconds" (at: when the tree's RSS was at its most).
tree_peaks() {
  awk '{ if ($3 > h) h = $3; if ($4 > r) { r = $4; at = $1 } if ($5 > p) p = $5 }
       END { printf "%d %d %d %s\n", h, r, p, (at == "" ? "-" : at) }' "$1"
}

# child_spans FILE: the spans when a child ran beside the process (the tree's
# RSS over the process's by more than 4 MB: the two are read a moment apart,
# and the process's own growth between the reads is no child), as
# "start-end" seconds, one a line: the live analyses, seen at SAMPLE_EVERY.
# child_on is that rule as an awk condition on a sample_tree line (within uses it too).
child_on='$4 > $2 + 4096'
child_spans() {
  awk "{ on = ($child_on) }"'
       on && !was { s = $1 } !on && was { print s "-" prev }
       { was = on; prev = $1 }
       END { if (was) print s "-" prev }' "$1"
}

# within FILE D RATE: a run's growth within itself, which compares like
# with like where two runs do not (a 1-minute run ends before its first
# checkpoint, so a child is in its peak only if the run's end was late; a
# longer run meets a worse stall): the Pss of the process and its children
# at its most while a child (a checkpoint) ran beside it, in the first
# minute from 60 s with one seen and in the last minute of sending (D-60 to
# D s), KiB — "from-s first last B/msg": the first minute's start, the two
# Pss, and the growth in bytes a message sent between the two minutes'
# starts at RATE ("-" for a run under 180 s or without a child seen in
# both: a checkpoint shorter than SAMPLE_EVERY is missed).
within() {
  awk -v d="$2" -v rate="$3" '
    '"$child_on"' && $1 >= 60 && $1 < d { m = int($1 / 60); if (!(m in p) || $5 > p[m]) p[m] = $5 }
    END {
      first = -1; for (m = 1; m * 60 < d; m++) if (m in p) { first = m; break }
      last = int((d - 1) / 60)
      if (d < 180 || first < 0 || !(last in p) || last <= first) { print "- - - -"; exit }
      printf "%d %d %d %.1f\n", first * 60, p[first], p[last], (p[last] - p[first]) * 1024 / (rate * (last - first) * 60)
    }' "$1"
}

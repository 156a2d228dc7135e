#!/usr/bin/env bash
# soak-none.sh: the run process's memory with delivery none (issue 23's goal:
# peak RSS grows < 1 byte a message from 1 to 10 minutes), like for like.
#
# `msgload run` at RATE/s for each of DURATIONS seconds against a target in a
# second process on loopback whose every answer waits LATENCY: `msgload sim`
# (TARGET=sim, the simulator's faults.latency) or nginx answering the send
# with a new txId after echo_sleep (TARGET=nginx: the echo module, Debian's
# libnginx-mod-http-echo; a target that costs the two cores little, so that
# the attacker has them: the simulator's own work at 5,000/s left this
# machine's attacker 2-3 % late). The messages in flight, and so the connections
# the attacker opens, are rate x latency at every length instead of whatever
# the machine's stalls of the moment made them. For each run it prints the
# peak RSS (/usr/bin/time: the largest of the process and any child it
# waited for), the most the process and its children held together (VmRSS
# summed every SAMPLE_EVERY s, default 1: the live analysis is a child,
# harness/livechild.go; the spans when one ran are in WORK/analyses-D), the
# peak live heap and goroutine stacks of the Go runtime (GODEBUG=gctrace=1: MB at each GC), the most connections to the
# target open at once (ss, sampled every second: idle connections stay open
# 90 s, so a burst's are seen), the messages planned and sent, the sends
# capped by the in-flight cap and those sent late; then the growth of the
# peak RSS, of the peak live heap and of the mean live heap over the last
# minute of sending (a base the stalls move less) in bytes a message from the
# first run to each later one. A run whose plan did not hold (capped > 0, or more than 1 %
# of its sends late) or whose connections differ from the first run's by more
# than 5 % is no like for like: marked so, its growth is not the goal's.
#
#   scripts/soak-none.sh                       1, 3 and 10 minutes at 5,000/s (~15 min)
#   RATE=2000 DURATIONS="60 180" scripts/soak-none.sh
#   TARGET=nginx scripts/soak-none.sh          the same against nginx
#
# What a connection costs: the column KiB/conn is the growth of the peak RSS
# from the first run over the connections more than it held, for a run whose
# connections differ from the first's by more than 5 %. STALL=S stops the
# target (SIGSTOP: nginx's workers, or the simulator) for S seconds at STALL_AT
# (30) seconds into every run but the first, as a stall of the machine would:
# the sends due meanwhile pile up, each opening a connection of its own, so
#
#   TARGET=nginx DURATIONS="60 60" STALL=0.2 scripts/soak-none.sh
#
# measures what each connection a stall opens adds to the peak, like for like.
#
# ABORT='EXPR' adds the threshold EXPR with abortOnFail (judged live all the
# run: on the carried analysis in the run's process when it reads only
# figures of the sends, reports.Carried).
#
# Environment: TARGET (sim), RATE (5000), DURATIONS ("60 180 600"), LATENCY (20ms), SAMPLE_EVERY (1), STALL, STALL_AT (30), PORT
# (18081), MSGLOAD (a built binary; default: go build into WORK), WORK (a
# directory for the run directories and logs; default: a new temporary one).
# Needs /usr/bin/time, ss and jq. Run it on an idle machine: a run that shares
# the cores with other work does not hold its plan.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/memsample.sh
TARGET=${TARGET:-sim}
RATE=${RATE:-5000}
DURATIONS=${DURATIONS:-"60 180 600"}
LATENCY=${LATENCY:-20ms}
PORT=${PORT:-18081}
WORK=${WORK:-$(mktemp -d /tmp/soak-none.XXXXXX)}
mkdir -p "$WORK"
BIN=${MSGLOAD:-$WORK/msgload}
if [ ! -x "$BIN" ]; then
  ${GO:-go} build -o "$BIN" ./cmd/msgload
fi
printf 'faults: { latency: %s }\n' "$LATENCY" > "$WORK/sim.yaml"
ECHO_MODULE=${ECHO_MODULE:-/usr/lib/nginx/modules/ngx_http_echo_module.so}

# nginx_conf: nginx answering POST /messaging/v1/send as the API does (200,
# a new uuid txId from $request_id, state ACCEPTED) after LATENCY.
nginx_conf() {
  local n=$WORK/nginx secs
  secs=$(awk -v l="$LATENCY" 'BEGIN { if (l ~ /ms$/) { sub(/ms$/, "", l); print l / 1000 } else { sub(/s$/, "", l); print l + 0 } }')
  mkdir -p "$n"
  cat > "$n/nginx.conf" <<EOF
load_module $ECHO_MODULE;
worker_processes 1;
daemon off;
pid $n/nginx.pid;
error_log $n/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path $n/body;
  proxy_temp_path $n/proxy;
  fastcgi_temp_path $n/fcgi;
  uwsgi_temp_path $n/uwsgi;
  scgi_temp_path $n/scgi;
  keepalive_requests 100000000;
  keepalive_timeout 120s;
  map \$request_id \$uuid {
    "~^(?<a>.{8})(?<b>.{4})(?<c>.{4})(?<d>.{4})(?<e>.{12})\$" "\$a-\$b-\$c-\$d-\$e";
  }
  server {
    listen 127.0.0.1:$PORT;
    location = /messaging/v1/send {
      default_type application/json;
      echo_read_request_body;
      echo_sleep $secs;
      echo -n '{"txId":"\$uuid","updatedAt":"\$time_iso8601","state":"ACCEPTED","error":{"code":0,"message":"ok"}}';
    }
  }
}
EOF
}

# start_target D: starts the target of the D-second run in the background
# (its pid in simpid).
start_target() {
  case $TARGET in
  sim) "$BIN" sim --addr "127.0.0.1:$PORT" --config "$WORK/sim.yaml" > "$WORK/sim-$1.log" 2>&1 & ;;
  nginx)
    [ -f "$WORK/nginx/nginx.conf" ] || nginx_conf
    nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" > "$WORK/sim-$1.log" 2>&1 & ;;
  *) echo "soak-none: TARGET is sim or nginx, not $TARGET" >&2; exit 2 ;;
  esac
  simpid=$!
}

# stall_target: stops the target for STALL seconds at STALL_AT seconds
# (in the background; its pid in stallpid).
stall_target() {
  (
    sleep "${STALL_AT:-30}"
    case $TARGET in
    nginx) pkill -STOP -P "$simpid"; sleep "$STALL"; pkill -CONT -P "$simpid" ;;
    *) kill -STOP "$simpid"; sleep "$STALL"; kill -CONT "$simpid" ;;
    esac
  ) &
  stallpid=$!
}

# scenario D: the delivery-none scenario of D seconds at RATE.
scenario() {
  cat <<EOF
name: none$1s
api: messaging
target: { baseUrl: "http://127.0.0.1:$PORT" }
auth: { login: demo, password: demo }
load: { profile: constant, rate: $RATE/s, duration: $1s }
message:
  recipient: "+7999{0000000-9999999}"
  text: "none {{.Seq}}"
  scenario: [ { channel: sms, sender: msgload } ]
delivery: { via: none }
EOF
  if [ -n "${ABORT:-}" ]; then
    printf 'thresholds:\n  - { expr: %s, abortOnFail: true }\n' "$ABORT"
  fi
}

# wait_port: until the simulator listens (at most 10 s).
wait_port() {
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "soak-none: the target ($TARGET) did not listen on $PORT" >&2
  return 1
}

# sample_conns FILE: the connections to the target open now, once a second.
sample_conns() {
  while :; do
    ss -Htn state established "( dport = :$PORT )" | wc -l >> "$1"
    sleep 1
  done
}

# gc_peak LOG FIELD: the largest of a gctrace figure over the run — live
# (the heap marked live, MB) or stacks (MB).
gc_peak() {
  case $2 in
  live) grep -o '[0-9]*->[0-9]*->[0-9]* MB' "$1" | sed 's/.*->\([0-9]*\) MB/\1/' ;;
  stacks) grep -o '[0-9]* MB stacks' "$1" | cut -d' ' -f1 ;;
  esac | sort -n | tail -1
}

# gc_last_minute LOG D: the mean heap marked live (MB, one decimal) over the
# GCs of the last minute of sending (D-60 to D s after the process started):
# what the run holds on a base its stalls move less than they move the peak.
gc_last_minute() {
  awk -v d="$2" '/^gc / {
    t = $3; gsub(/[@s]/, "", t)
    if (t + 0 < d - 60 || t + 0 > d) next
    match($0, /[0-9]+->[0-9]+->[0-9]+ MB/); split(substr($0, RSTART, RLENGTH), a, "->")
    sum += a[3] + 0; n++
  } END { if (n) printf "%.1f", sum / n; else print 0 }' "$1"
}

# one D: a run of D seconds; appends its figures to $WORK/figures.
one() {
  local d=$1 dir=$WORK/runs-$1 sim simpid sampler
  rm -rf "$dir"; mkdir -p "$dir"
  scenario "$d" > "$WORK/none-$d.yaml"
  start_target "$d"
  wait_port
  : > "$WORK/conns-$d"
  sample_conns "$WORK/conns-$d" &
  sampler=$!
  local load stallpid=
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  if [ -n "${STALL:-}" ] && [ -s "$WORK/figures" ]; then
    if [ "${STALL_AT:-30}" -ge "$d" ]; then
      echo "soak-none: STALL_AT=${STALL_AT:-30} is not within the $d s run: no stall in it" >&2
    else
      stall_target
    fi
  fi
  run_sampled "$WORK/rss-$d" "$WORK/tree-$d" "$WORK/run-$d.log" "$WORK/gc-$d.log" \
    "$BIN" run "$WORK/none-$d.yaml" --out "$dir" --metrics-addr "" --quiet
  [ -z "$stallpid" ] || wait "$stallpid" 2>/dev/null || true
  kill "$sampler" "$simpid" 2>/dev/null || true
  wait "$sampler" "$simpid" 2>/dev/null || true
  local sum
  sum=$(ls "$dir"/*/summary.json 2>/dev/null | head -1)
  if [ -z "$sum" ]; then
    echo "soak-none: the $d s run left no summary.json: see $WORK/run-$d.log and $WORK/gc-$d.log" >&2
    return 1
  fi
  jq -r --arg d "$d" --arg rss "$(tail -1 "$WORK/rss-$d")" \
    --arg live "$(gc_peak "$WORK/gc-$d.log" live)" --arg held "$(gc_last_minute "$WORK/gc-$d.log" "$d")" --arg stacks "$(gc_peak "$WORK/gc-$d.log" stacks)" \
    --arg conns "$(sort -n "$WORK/conns-$d" | tail -1)" --arg load "$load" --arg tree "$(tree_peaks "$WORK/tree-$d" | cut -d' ' -f2)" \
    '[$d, $rss, $live, $stacks, $conns, .requests.planned_messages, .requests.messages,
      (.requests.capped // 0), (.requests.late // 0), .verdict, $load, $held, $tree] | @tsv' "$sum" >> "$WORK/figures"
  child_spans "$WORK/tree-$d" > "$WORK/analyses-$d"
}

: > "$WORK/figures"
for d in $DURATIONS; do
  one "$d"
done

echo "# msgload run, delivery none, ${RATE}/s, target ($TARGET) answers in $LATENCY; $WORK"
echo "# growth: from the first run, in bytes a message sent (peak RSS; peak live heap; mean live heap of the last minute of sending; heap in MB)"
awk -F'\t' 'BEGIN { OFS = "\t"; print "s", "peak RSS KiB", "tree RSS KiB", "live MB", "stacks MB", "conns", "planned", "sent", "capped", "late", "verdict", "RSS B/msg", "tree B/msg", "live B/msg", "last-minute live MB", "its B/msg", "like for like", "KiB/conn", "load at start" }
{
  held = ($8 == 0 && $9 <= $7 / 100)
  if (NR == 1) { rss0 = $2; live0 = $3; sent0 = $7; conns0 = $5; ok0 = held; held0 = $12; tree0 = $13 }
  same = (conns0 > 0 && $5 >= conns0 * 0.95 && $5 <= conns0 * 1.05)
  like = (held && ok0 && same) ? "yes" : (held ? (ok0 ? "no: connections differ" : "no: the first run did not hold its plan") : "no: plan not held")
  g1 = g2 = g3 = g4 = "-"
  if (NR > 1 && $7 > sent0 * 1.01) { # a run as long as the first (STALL) grows by no message
    g1 = sprintf("%.2f", ($2 - rss0) * 1024 / ($7 - sent0))
    g4 = sprintf("%.2f", ($13 - tree0) * 1024 / ($7 - sent0))
    g2 = sprintf("%.2f", ($3 - live0) * 1048576 / ($7 - sent0))
    g3 = sprintf("%.2f", ($12 - held0) * 1048576 / ($7 - sent0))
  }
  kc = (NR > 1 && !same && conns0 > 0 && $5 > 0 && $5 != conns0) ? sprintf("%.1f", ($2 - rss0) / ($5 - conns0)) : "-"
  print $1, $2, $13, $3, $4, $5, $6, $7, $8, $9, $10, g1, g4, g2, $12, g3, like, kc, $11
}' "$WORK/figures" | column -t -s $'\t'
echo "# within each run of 180 s or more: the process and its children together (Pss, KiB) at their most while a checkpoint ran, in the first minute from 60 s with one seen and in the last minute of sending, and the growth between in bytes a message sent"
{
  printf 's\tfrom s\tPss then\tPss last minute\tB/msg\n'
  for d in $DURATIONS; do
    [ -f "$WORK/tree-$d" ] && printf '%s\t%s\n' "$d" "$(within "$WORK/tree-$d" "$d" "$RATE" | tr ' ' '\t')"
  done
} | column -t -s $'\t'

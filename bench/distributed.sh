#!/usr/bin/env bash
# The distributed mode against the local pipeline, side by side in one run
# (issue 15), on a throwaway PostgreSQL (loopback, fsync=off):
#
#  1. 500 one-line files: `share ingest` (local, in-process) against
#     `share ingest --db` with ONE `share worker` (default 2 threads) on loopback,
#     alternating local and distributed each round; the ratio of the medians
#     (target <= 2.5). From the distributed rounds: jobs/s per core, i.e. jobs
#     (4 item stages x 500 + 1 manifest) per CPU-second of the worker, and of the
#     worker plus its database backends.
#  2. One batch of 1,000 small items over 4 workers, with the database behind
#     bench/latency-proxy.py adding DELAY_MS each way (~3 ms per round trip,
#     measured with pgbench and printed): items/s (target >= 150).
#
#   SHARE_BIN=.build/release/share ROUNDS=5 DELAY_MS=1.5 bash bench/distributed.sh
set -euo pipefail
cd "$(dirname "$0")/.."
share=$(realpath "${SHARE_BIN:-.build/release/share}")
rounds=${ROUNDS:-5}
delay=${DELAY_MS:-1.5}
threads=${THREADS:-2}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
work=$(mktemp -d)
chmod 755 "$work"  # the server runs as the postgres user
port=$((40000 + RANDOM % 20000))
proxy_port=$((port + 1))
url=$(bash scripts/pg-throwaway.sh start "$work/pg" "$port") || { cat "$work/pg/"*.log >&2; exit 1; }
proxied="postgresql://postgres@127.0.0.1:$proxy_port/postgres"
pids=()
proxy=
cleanup() {
  for pid in "${pids[@]}" $proxy; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  bash scripts/pg-throwaway.sh stop "$work/pg"
  rm -rf "$work"
}
trap cleanup EXIT
"$share" db migrate --db "$url" 2>/dev/null

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
seconds() { local start=$(date +%s.%N); "$@" >/dev/null 2>"$work/last.err" || { cat "$work/last.err" >&2; return 1; }; awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }'; }
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
ticks=$(getconf CLK_TCK)
# CPU seconds (user + system) of these processes so far.
cpu() { local total=0; for pid in "$@"; do [ -r "/proc/$pid/stat" ] && total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; calc "$total / $ticks"; }
# Transactions committed in the database so far (every statement outside BEGIN is one).
commits() { "$bin/psql" -X -Atq "$url" -c "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"; }
backends() { "$bin/psql" -X -Atq "$url" -c "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'share-worker@%'"; }
rtt() { echo "SELECT 1;" >"$work/select.sql"; "$bin/pgbench" -n -f "$work/select.sql" -c 1 -t 300 "$1" 2>/dev/null | awk '/latency average/ {print $4}'; }
drop() { mkdir -p "$work/$1"; for i in $(seq "$2"); do echo "line $i" >"$work/$1/note-$i.txt"; done; }
live() { "$share" status --db "$url" --json | awk -F'"liveWorkers":' '/"summary"/ {split($2, a, /[,}]/); print a[1]}'; }
start_workers() {  # COUNT URL
  local before=$(live)
  for w in $(seq "$1"); do "$share" worker --db "$2" --concurrency "$threads" --quiet --name "w$w-$RANDOM" 2>>"$work/workers.log" & pids+=($!); done
  until [ "$(live)" -ge $((before + $1)) ]; do sleep 0.1; done
}
stop_workers() { for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done; wait "${pids[@]}" 2>/dev/null || true; pids=(); }

drop small500 500
drop small1000 1000
echo "machine: $(nproc) cores; $(uptime)"
echo "share: $share; rounds: $rounds; worker threads: $threads; PostgreSQL $("$bin/postgres" --version | awk '{print $3}') (fsync=off)"

# 1. One worker on loopback against the local pipeline.
start_workers 1 "$url"
worker=${pids[0]}
local_times=() dist_times=() worker_cpu=0 backend_cpu=0
commits_before=$(commits)
for r in $(seq "$rounds"); do
  local_times+=("$(seconds "$share" ingest --quiet --container "$work/local-$r" "$work/small500")")
  sessions=$(backends)
  before_w=$(cpu "$worker") before_b=$(cpu $sessions)
  dist_times+=("$(seconds "$share" ingest --quiet --db "$url" --container "$work/dist-$r" "$work/small500")")
  worker_cpu=$(calc "$worker_cpu + $(cpu "$worker") - $before_w")
  backend_cpu=$(calc "$backend_cpu + $(cpu $sessions) - $before_b")
done
sleep 11  # backends report their commit counts at most every second, or after 10 s idle
commits_after=$(commits)
stop_workers
local_median=$(printf '%s\n' "${local_times[@]}" | median)
dist_median=$(printf '%s\n' "${dist_times[@]}" | median)
jobs=$((rounds * (500 * 4 + 1)))
echo
echo "1. 500 one-line files (median of $rounds, alternating)"
printf "%-34s %10s %10s\n" mode "median s" "items/s"
printf "%-34s %10.2f %10.1f\n" "local (share ingest)" "$local_median" "$(calc "500 / $local_median")"
printf "%-34s %10.2f %10.1f\n" "1 worker, loopback (ingest --db)" "$dist_median" "$(calc "500 / $dist_median")"
echo "ratio distributed / local: $(calc "$dist_median / $local_median") (target <= 2.5)"
echo "jobs/s per core: $(calc "$jobs / $worker_cpu") per worker CPU-second ($jobs jobs, $worker_cpu s);" \
  "$(calc "$jobs / ($worker_cpu + $backend_cpu)") counting its database backends too ($backend_cpu s)"
echo "transactions per job: $(calc "($commits_after - $commits_before - $rounds - 1) / $jobs") (every statement of the worker and of ingest --db: enqueue, claims, completions, heartbeats, checks for gone workers, the client's waits)"
echo "local rounds: ${local_times[*]}"
echo "distributed rounds: ${dist_times[*]}"

# 2. 1,000 items over 4 workers behind ~3 ms round trips.
python3 bench/latency-proxy.py "$proxy_port" 127.0.0.1 "$port" "$delay" >"$work/proxy.out" &
proxy=$!
until grep -q ready "$work/proxy.out" 2>/dev/null; do sleep 0.05; done
echo
echo "2. one batch of 1,000 small items over 4 workers, $delay ms added each way:" \
  "round trip (pgbench SELECT 1) $(rtt "$proxied") ms through the proxy, $(rtt "$url") ms direct"
start_workers 4 "$proxied"
times=()
for r in $(seq "$rounds"); do
  times+=("$(seconds "$share" ingest --quiet --db "$proxied" --container "$work/far-$r" "$work/small1000")")
done
stop_workers
kill "$proxy" 2>/dev/null || true
far=$(printf '%s\n' "${times[@]}" | median)
echo "median $(calc "$far") s: $(calc "1000 / $far") items/s (target >= 150); rounds: ${times[*]}"
echo "round trip after: $(rtt "$url") ms direct; $(uptime)"

#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests: `start DIR [PORT]` prints a
# connection URL; `stop DIR` stops it; `sql PORT DATABASE SQL` runs SQL there as
# the superuser (psql, stopping at the first error) and prints the result. The server refuses to run as root, so it
# runs as the `postgres` user (from Debian's postgresql package), listening on
# loopback and on a Unix socket inside DIR.
set -euo pipefail
command=${1:?start|stop}
dir=${2:?folder}
port=${3:-55432}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# The server outlives this script: it must not inherit any descriptor beyond
# stdin/stdout/stderr (a caller waiting on one would wait for the server).
for fd in $(ls /proc/$$/fd); do
  if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
done

case "$command" in
start)
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    if ! as_postgres "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync >"$dir/initdb.log" 2>&1; then
      tail -n 20 "$dir/initdb.log"; exit 1
    fi
  fi
  # On failure, say why (the server's log: e.g. "Address already in use").
  if ! as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=100" start </dev/null >/dev/null 2>&1; then
    tail -n 20 "$dir/server.log" 2>/dev/null; exit 1
  fi
  echo "postgresql://postgres@127.0.0.1:$port/postgres"
  ;;
stop)
  as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  ;;
sql)
  # Here DIR is the port and PORT the database.
  "$bin/psql" -X -q -t -A -v ON_ERROR_STOP=1 "postgresql://postgres@127.0.0.1:$dir/$port" -c "${4:?SQL}"
  ;;
*) echo "usage: $0 start|stop DIR [PORT] | sql PORT DATABASE SQL" >&2; exit 2 ;;
esac

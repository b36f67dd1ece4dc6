#!/usr/bin/env bash
# Runs N ClickHouse servers on loopback as the shards of one cluster: the
# fleet store of docs/fleet.md, bench/fleet.sh and the integration tests.
#
#   bash scripts/clickhouse-shards.sh start DIR [N]     writes configs (first
#        time), starts N (default 2) servers, waits until each answers
#        `SELECT 1`, writes DIR/urls (comma-separated HTTP URLs)
#   bash scripts/clickhouse-shards.sh stop DIR           stops every shard
#   bash scripts/clickhouse-shards.sh stop-shard DIR I   stops shard I (0-based)
#   bash scripts/clickhouse-shards.sh start-shard DIR I  starts shard I again
#
# Each shard lives in DIR/shardI/: config.xml, users.xml, data/, log/, pid.
# Servers are plain processes (not systemd units), listen on 127.0.0.1 only,
# on ports chosen free when the configs are first written and kept after (a
# restarted shard comes back at the same URL with its data). Every config
# names all N shards in remote_servers as cluster `profcpu` (the default of
# `profcpu fleet init -cluster`), so a Distributed table on any shard reaches
# them all. Stopping is by the pid written at start: SIGTERM, then SIGKILL
# after 20 s.
#
# CLICKHOUSE_SERVER overrides the server binary (default: clickhouse-server
# on PATH, else /usr/sbin/clickhouse-server; scripts/setup.sh installs it).
set -euo pipefail

usage() {
  sed -n '5,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

START_TIMEOUT=${CLICKHOUSE_START_TIMEOUT:-60}  # seconds until SELECT 1 answers
STOP_TIMEOUT=20                               # seconds between SIGTERM and SIGKILL

server_binary() {
  if [ -n "${CLICKHOUSE_SERVER:-}" ]; then echo "$CLICKHOUSE_SERVER"; return; fi
  if command -v clickhouse-server >/dev/null 2>&1; then command -v clickhouse-server; return; fi
  if [ -x /usr/sbin/clickhouse-server ]; then echo /usr/sbin/clickhouse-server; return; fi
  echo "clickhouse-shards: clickhouse-server is missing: apt-get install clickhouse-server" \
       "(scripts/setup.sh installs it)" >&2
  exit 1
}

# Prints 3*N distinct free TCP ports on 127.0.0.1 (held open together while
# chosen, so no two are the same).
free_ports() {
  python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(3 * int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
}

# write_users FILE: the default user, no password, loopback only; queries
# capped at 2 GB of memory each (a laptop's store, not a server's).
write_users() {
  cat >"$1" <<'EOF'
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>2000000000</max_memory_usage>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>::1</ip>
                <ip>127.0.0.1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
EOF
}

# write_config DIR/shardI HTTP TCP INTERSERVER REMOTE_SERVERS_XML
write_config() {
  local dir=$1 http=$2 tcp=$3 interserver=$4 shards_xml=$5
  mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas" "$dir/log"
  write_users "$dir/users.xml"
  cat >"$dir/config.xml" <<EOF
<?xml version="1.0"?>
<!-- Written by scripts/clickhouse-shards.sh: one shard of a loopback store. -->
<yandex>
    <logger>
        <level>warning</level>
        <log>$dir/log/clickhouse-server.log</log>
        <errorlog>$dir/log/clickhouse-server.err.log</errorlog>
        <size>100M</size>
        <count>3</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>$http</http_port>
    <tcp_port>$tcp</tcp_port>
    <interserver_http_host>127.0.0.1</interserver_http_host>
    <interserver_http_port>$interserver</interserver_http_port>
    <max_connections>256</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>50</max_concurrent_queries>
    <!-- Small caches: two shards share one machine with the agent and the tests. -->
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <mark_cache_size>268435456</mark_cache_size>
    <path>$dir/data/</path>
    <tmp_path>$dir/tmp/</tmp_path>
    <user_files_path>$dir/user_files/</user_files_path>
    <format_schema_path>$dir/format_schemas/</format_schema_path>
    <users_config>$dir/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <!-- Partitions are UTC days whatever the machine's zone: the agent cuts
         windows at UTC midnight and retention counts UTC days. -->
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <remote_servers>
        <profcpu>
$shards_xml
        </profcpu>
    </remote_servers>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
</yandex>
EOF
}

# configure DIR N: writes every shard's config unless DIR already holds a
# store of N shards (then its ports, URLs and data stay as they are).
configure() {
  local dir=$1 n=$2
  if [ -f "$dir/shards" ] && [ -f "$dir/urls" ]; then
    local have
    have=$(cat "$dir/shards")
    if [ "$have" = "$n" ]; then return 0; fi
    echo "clickhouse-shards: $dir holds a store of $have shards, not $n; stop it and use another DIR" >&2
    exit 1
  fi
  local ports
  read -r -a ports <<<"$(free_ports "$n")"
  local shards_xml="" urls="" i
  for ((i = 0; i < n; i++)); do
    shards_xml+="            <shard><replica><host>127.0.0.1</host><port>${ports[3 * i + 1]}</port></replica></shard>"$'\n'
    urls+="${urls:+,}http://127.0.0.1:${ports[3 * i]}"
  done
  for ((i = 0; i < n; i++)); do
    write_config "$dir/shard$i" "${ports[3 * i]}" "${ports[3 * i + 1]}" "${ports[3 * i + 2]}" "$shards_xml"
    echo "http://127.0.0.1:${ports[3 * i]}" >"$dir/shard$i/url"
  done
  echo "$urls" >"$dir/urls"
  echo "$n" >"$dir/shards"
}

# alive PIDFILE: the pid in PIDFILE is a running clickhouse-server (not a
# recycled pid of something else).
alive() {
  local pid
  [ -f "$1" ] || return 1
  pid=$(cat "$1")
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "clickhouse" || return 1
  # A zombie is not running.
  [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]
}

start_shard() {
  local dir=$1 i=$2
  local shard=$dir/shard$i
  [ -f "$shard/config.xml" ] || { echo "clickhouse-shards: no $shard/config.xml (run start first)" >&2; exit 1; }
  if alive "$shard/pid"; then echo "clickhouse-shards: shard $i already runs (pid $(cat "$shard/pid"))" >&2; return 0; fi
  local binary url
  binary=$(server_binary)
  url=$(cat "$shard/url")
  # setsid: the server outlives this script and a terminal's Ctrl-C.
  setsid "$binary" --config-file="$shard/config.xml" >>"$shard/log/stdout.log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$shard/pid"
  local deadline=$((SECONDS + START_TIMEOUT))
  until curl -fsS --max-time 2 "$url/?query=SELECT%201" 2>/dev/null | grep -qx 1; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "clickhouse-shards: shard $i (pid $pid) exited at start; its logs say:" >&2
      tail -n 20 "$shard/log/clickhouse-server.err.log" "$shard/log/stdout.log" >&2 2>/dev/null || true
      rm -f "$shard/pid"
      exit 1
    fi
    if ((SECONDS >= deadline)); then
      echo "clickhouse-shards: shard $i (pid $pid) did not answer at $url within ${START_TIMEOUT}s" >&2
      tail -n 20 "$shard/log/clickhouse-server.err.log" >&2 2>/dev/null || true
      stop_shard "$dir" "$i"
      exit 1
    fi
    sleep 0.2
  done
  echo "clickhouse-shards: shard $i up at $url (pid $pid)" >&2
}

stop_shard() {
  local dir=$1 i=$2
  local pidfile=$dir/shard$i/pid
  if ! alive "$pidfile"; then rm -f "$pidfile"; return 0; fi
  local pid
  pid=$(cat "$pidfile")
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + STOP_TIMEOUT))
  while alive "$pidfile"; do
    if ((SECONDS >= deadline)); then
      echo "clickhouse-shards: shard $i (pid $pid) ignored SIGTERM for ${STOP_TIMEOUT}s; SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.1
  done
  while [ -d "/proc/$pid" ] && alive "$pidfile"; do sleep 0.05; done
  rm -f "$pidfile"
  echo "clickhouse-shards: shard $i stopped" >&2
}

shard_count() {
  [ -f "$1/shards" ] || { echo "clickhouse-shards: no store in $1" >&2; exit 1; }
  cat "$1/shards"
}

check_index() {
  local n
  n=$(shard_count "$1")
  [[ "$2" =~ ^[0-9]+$ ]] && (($2 < n)) || { echo "clickhouse-shards: no shard $2 in $1 ($n shards)" >&2; exit 2; }
}

command=${1:-}
dir=${2:-}
[ -n "$command" ] && [ -n "$dir" ] || usage
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

case $command in
  start)
    n=${3:-2}
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "clickhouse-shards: N must be a positive number" >&2; exit 2; }
    server_binary >/dev/null
    configure "$dir" "$n"
    for ((i = 0; i < n; i++)); do start_shard "$dir" "$i"; done
    cat "$dir/urls"
    ;;
  stop)
    n=$(shard_count "$dir")
    for ((i = 0; i < n; i++)); do stop_shard "$dir" "$i"; done
    ;;
  stop-shard)
    check_index "$dir" "${3:-}"
    stop_shard "$dir" "$3"
    ;;
  start-shard)
    check_index "$dir" "${3:-}"
    start_shard "$dir" "$3"
    ;;
  *) usage ;;
esac

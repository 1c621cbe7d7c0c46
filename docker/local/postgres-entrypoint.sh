#!/bin/sh
# The official postgres image's start-up contract, on Debian's PostgreSQL: as root, own PGDATA and
# drop to the postgres user; on an empty PGDATA, initdb with POSTGRES_USER and POSTGRES_PASSWORD,
# create POSTGRES_DB, and run /docker-entrypoint-initdb.d/* (*.sh, *.sql, *.sql.gz) against a
# temporary server that listens on its socket only; then start the server on every address, with
# password (scram-sha-256) authentication over TCP.
set -eu

POSTGRES_USER=${POSTGRES_USER:-postgres}
POSTGRES_DB=${POSTGRES_DB:-$POSTGRES_USER}
export POSTGRES_USER POSTGRES_DB PGDATA

if [ "${1:-postgres}" != postgres ] && [ "${1#-}" = "${1:-}" ]; then
    exec "$@"  # another command (e.g. bash): run it as given
fi
[ "${1:-}" = postgres ] && shift

if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" postgres "$@"
fi

run_init_file() {
    case "$1" in
        *.sh) if [ -x "$1" ]; then "$1"; else (. "$1"); fi ;;
        *.sql) psql -v ON_ERROR_STOP=1 --no-psqlrc --dbname "$POSTGRES_DB" -f "$1" ;;
        *.sql.gz) gunzip -c "$1" | psql -v ON_ERROR_STOP=1 --no-psqlrc --dbname "$POSTGRES_DB" ;;
        *) echo "$0: ignoring $1" ;;
    esac
}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
        echo "$0: POSTGRES_PASSWORD is not set: the database is uninitialized" >&2
        exit 1
    fi
    password_file=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$password_file"
    initdb --username="$POSTGRES_USER" --pwfile="$password_file" --encoding=UTF8 \
        --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 ${POSTGRES_INITDB_ARGS:-}
    rm -f "$password_file"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"

    pg_ctl -D "$PGDATA" -w -o "-c listen_addresses=''" start
    export PGUSER="$POSTGRES_USER"
    if [ "$POSTGRES_DB" != postgres ]; then
        psql -v ON_ERROR_STOP=1 --no-psqlrc --dbname postgres --set db="$POSTGRES_DB" <<'SQL'
CREATE DATABASE :"db";
SQL
    fi
    for file in /docker-entrypoint-initdb.d/*; do
        [ -e "$file" ] && run_init_file "$file"
    done
    pg_ctl -D "$PGDATA" -m fast -w stop
    unset PGUSER
    echo "PostgreSQL init process complete; ready for start up."
fi

exec postgres "$@"

# Sourced by .ci/run: make Chromium and a PostgreSQL server available, installing what is missing.
# Exports HERALDBENCH_TEST_POSTGRES_URL when a PostgreSQL server answers on 127.0.0.1:5432.

_apt_install() {
    if [ "$(id -u)" = "0" ]; then apt_cmd=(apt-get); else apt_cmd=(sudo -n apt-get); fi
    if ! DEBIAN_FRONTEND=noninteractive "${apt_cmd[@]}" install -y -q "$@" > /tmp/hb-apt.log 2>&1; then
        "${apt_cmd[@]}" update -q > /dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive "${apt_cmd[@]}" install -y -q "$@" > /tmp/hb-apt.log 2>&1
    fi
}

if [ ! -x /usr/bin/chromium ]; then
    echo "ci: installing Debian's chromium and chromium-driver"
    _apt_install chromium chromium-driver
fi

_pg_ready() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }

if ! command -v pg_isready > /dev/null 2>&1; then
    echo "ci: installing PostgreSQL"
    _apt_install postgresql postgresql-client
fi
if ! _pg_ready; then
    echo "ci: starting PostgreSQL"
    for version in $(ls /etc/postgresql 2>/dev/null); do
        pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null || true
    done
    for _ in $(seq 1 30); do _pg_ready && break; sleep 1; done
fi
if _pg_ready; then
    # Local connections on these machines use trust auth; a fresh install uses peer auth for the
    # postgres role, so connect as that role through its socket to make the test database.
    if ! psql -h 127.0.0.1 -U postgres -d postgres -Atc 'select 1' > /dev/null 2>&1; then
        su postgres -c "psql -Atc \"alter user postgres password 'postgres'\"" > /dev/null 2>&1 || true
        export PGPASSWORD=postgres
        pg_url="postgresql+psycopg://postgres:postgres@127.0.0.1:5432"
    else
        pg_url="postgresql+psycopg://postgres@127.0.0.1:5432"
    fi
    if ! psql -h 127.0.0.1 -U postgres -d postgres -Atc "select 1 from pg_database where datname='heraldbench_test'" | grep -q 1; then
        psql -h 127.0.0.1 -U postgres -d postgres -qc 'create database heraldbench_test' > /dev/null
    fi
    export HERALDBENCH_TEST_POSTGRES_URL="${HERALDBENCH_TEST_POSTGRES_URL:-$pg_url/heraldbench_test}"
    echo "ci: PostgreSQL at $HERALDBENCH_TEST_POSTGRES_URL"
else
    echo "ci: no PostgreSQL server answered; its tests will be skipped"
fi

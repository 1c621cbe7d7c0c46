# A stand-in for postgres:16 where Docker Hub cannot be reached: Debian bookworm's PostgreSQL 15
# behind an entrypoint that honours the official image's POSTGRES_USER, POSTGRES_PASSWORD,
# POSTGRES_DB, PGDATA and /docker-entrypoint-initdb.d (postgres-entrypoint.sh).
ARG BOOKWORM_IMAGE=heraldbench-local/bookworm:minbase
FROM ${BOOKWORM_IMAGE}

ENV LANG=C.UTF-8 \
    PGDATA=/var/lib/postgresql/data \
    PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# Debian's package would create and start a cluster of its own: the entrypoint makes the only one.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-common \
    && sed -ri 's/#?create_main_cluster.*/create_main_cluster = false/' \
        /etc/postgresql-common/createcluster.conf \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /docker-entrypoint-initdb.d /var/run/postgresql "$PGDATA" \
    && chown -R postgres:postgres /var/run/postgresql /var/lib/postgresql \
    && postgres --version

COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME /var/lib/postgresql/data
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]

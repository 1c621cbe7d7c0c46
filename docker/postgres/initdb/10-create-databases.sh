#!/bin/sh
# Creates MLflow's and Optuna's own databases beside the app's ($POSTGRES_DB, which the postgres
# image creates). Separate databases, because MLflow and Optuna both keep an alembic_version table
# and would overwrite each other's in one. The postgres image runs this once, when it initialises
# an empty data volume; tests/stack runs it against the test server, with PGHOST and PGPORT set.
set -eu

for database in "$MLFLOW_DB" "$OPTUNA_DB"; do
    psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
        --set database="$database" <<'SQL'
SELECT format('CREATE DATABASE %I', :'database')
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'database')\gexec
SQL
done

#!/bin/sh
# Roles and databases for the booking store and for Temporal. The
# postgres image runs this once, when its volume is first created; the
# passwords come from the same variables the services connect with.
set -eu
# bookingsaga owns the schema and only migrates; the worker, the API and
# the retention job log in as roles that own nothing, which migration 016
# grants what each needs (docs/security.md, database roles).
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v bs_pw="$BOOKINGSAGA_DB_PASSWORD" -v t_pw="$TEMPORAL_DB_PASSWORD" \
  -v w_pw="$BOOKINGSAGA_WORKER_DB_PASSWORD" -v a_pw="$BOOKINGSAGA_API_DB_PASSWORD" \
  -v r_pw="$BOOKINGSAGA_RETENTION_DB_PASSWORD" <<'SQL'
CREATE ROLE bookingsaga LOGIN PASSWORD :'bs_pw';
CREATE DATABASE bookingsaga OWNER bookingsaga;
CREATE ROLE bookingsaga_worker LOGIN PASSWORD :'w_pw';
CREATE ROLE bookingsaga_api LOGIN PASSWORD :'a_pw';
CREATE ROLE bookingsaga_retention LOGIN PASSWORD :'r_pw';
GRANT CONNECT ON DATABASE bookingsaga TO bookingsaga_worker, bookingsaga_api, bookingsaga_retention;
CREATE ROLE temporal LOGIN CREATEDB PASSWORD :'t_pw';
SQL

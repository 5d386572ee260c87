#!/bin/sh
# Roles and databases for the booking store and for Temporal. The
# postgres image runs this once, when its volume is first created; the
# passwords come from the same variables the services connect with.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v bs_pw="$BOOKINGSAGA_DB_PASSWORD" -v t_pw="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE bookingsaga LOGIN PASSWORD :'bs_pw';
CREATE DATABASE bookingsaga OWNER bookingsaga;
CREATE ROLE temporal LOGIN CREATEDB PASSWORD :'t_pw';
SQL

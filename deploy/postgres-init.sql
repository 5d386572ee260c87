-- Roles and databases for the booking store and for Temporal. Runs once,
-- when the PostgreSQL volume is first created. Change the passwords through
-- the compose environment in production.
CREATE ROLE bookingsaga LOGIN PASSWORD 'bookingsaga';
CREATE DATABASE bookingsaga OWNER bookingsaga;
CREATE ROLE temporal LOGIN CREATEDB PASSWORD 'temporal';

// Package deploy holds the deployment beyond one machine: the compose
// file's PostgreSQL init script, and the test that loads docker-compose.yml
// with the Compose specification's own loader (no Docker engine runs where
// the tests do, so this is how the file is verified).
package deploy

// Package deploy holds no code: it is the home of msgload's deployment files
// (prometheus.yml, compose.yaml, the Dockerfile the compose file builds) and of
// the tests that check them with the real promtool and by starting what the
// compose file starts.
package deploy

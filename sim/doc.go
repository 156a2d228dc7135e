// Package sim simulates the messaging API (Basic auth, multi-channel sends with
// failover, status callbacks, incoming replies) and the notification API (OAuth2
// client-credentials tokens, idempotent notifications, webhooks, a per-client
// rate limit) on one HTTP handler, and records the ground truth of what it drew
// so a run can compare its measurements with it. It is the embedded target of
// `msgload run` and the server behind `msgload sim`.
package sim

package sim

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Operations, as metric labels.
const (
	opSend          = "send"
	opCheckStatus   = "check_status"
	opToken         = "token"
	opNotifications = "notifications"
	opWebhooks      = "webhooks"
)

// Callback kinds (metric label and truth Kind), as rundir names them.
const (
	kindCallback = "callback"
	kindIncoming = "incoming"
	kindWebhook  = "webhook"
)

// maxClientLabels bounds the client label: the first 20 distinct clients,
// then "other".
const maxClientLabels = 20

type metrics struct {
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	rateLimited   *prometheus.CounterVec
	accepted      *prometheus.CounterVec
	pending       *prometheus.GaugeVec
	statusChanges *prometheus.CounterVec
	callbacks     *prometheus.CounterVec
	cbDuration    *prometheus.HistogramVec
	faults        *prometheus.CounterVec
	replays       *prometheus.CounterVec
	tokens        *prometheus.CounterVec

	mu      sync.Mutex
	clients map[string]bool
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	buckets := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sim_requests_total", Help: "Requests answered by the simulator, by API, operation, HTTP code and client.",
		}, []string{"api", "operation", "code", "client"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "msgload_sim_request_duration_seconds", Help: "Time the simulator took to answer, injected latency included.",
			Buckets: buckets, NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 100,
		}, []string{"api", "operation"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sim_rate_limited_total", Help: "Requests refused with 429 by the simulator's rate limiter.",
		}, []string{"client"}),
		accepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sim_messages_accepted_total", Help: "Messages and notifications accepted (first channel of a messaging scenario).",
		}, []string{"api", "channel"}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "msgload_sim_deliveries_pending", Help: "Accepted messages whose final state is not reached yet.",
		}, []string{"api"}),
		statusChanges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sim_status_changes_total", Help: "Status changes drawn by the delivery engine.",
		}, []string{"api", "channel", "state"}),
		callbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sim_callbacks_total", Help: "Calls made to callback, incoming and webhook URLs, by result.",
		}, []string{"kind", "result"}),
		cbDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "msgload_sim_callback_duration_seconds", Help: "Time the receiver took to answer a callback.",
			Buckets: buckets, NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 100,
		}, []string{"kind"}),
		faults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sim_faults_total", Help: "Faults injected into API answers.",
		}, []string{"fault"}),
		replays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sim_idempotent_replays_total", Help: "Notification requests answered from the idempotency store.",
		}, []string{"client"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sim_tokens_issued_total", Help: "Access tokens issued.",
		}, []string{"client"}),
		clients: map[string]bool{},
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.rateLimited, m.accepted, m.pending,
		m.statusChanges, m.callbacks, m.cbDuration, m.faults, m.replays, m.tokens} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// Known label sets at zero.
	for _, api := range []string{apiMessaging, apiNotify} {
		m.pending.WithLabelValues(api)
	}
	for _, api := range []string{apiMessaging} {
		for _, op := range []string{opSend, opCheckStatus} {
			m.duration.WithLabelValues(api, op)
		}
	}
	for _, op := range []string{opToken, opNotifications, opWebhooks} {
		m.duration.WithLabelValues(apiNotify, op)
	}
	for _, k := range []string{kindCallback, kindIncoming, kindWebhook} {
		m.cbDuration.WithLabelValues(k)
		for _, r := range []string{"ok", "error", "dropped", "duplicated", "retried", "failed"} {
			m.callbacks.WithLabelValues(k, r)
		}
	}
	for _, f := range []string{faultError500, faultError503, faultProcessed500, faultProcessedReset, faultLatency} {
		m.faults.WithLabelValues(f)
	}
	return m, nil
}

// client bounds the client label; "none" before a client is known.
func (m *metrics) client(id string) string {
	if id == "" {
		return "none"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.clients[id] {
		return id
	}
	if len(m.clients) >= maxClientLabels {
		return "other"
	}
	m.clients[id] = true
	return id
}

func (m *metrics) request(api, op string, code int, client string) {
	m.requests.WithLabelValues(api, op, strconv.Itoa(code), m.client(client)).Inc()
}

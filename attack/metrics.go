package attack

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
)

// otherClient is the client label of every client past the first maxClients.
const otherClient = "other"

// Metrics are the attacker's Prometheus metrics (names fixed by DESIGN.md's
// contract). Build them once with NewMetrics; Run fills them.
type Metrics struct {
	requests    *prometheus.CounterVec   // api, operation, code, client
	duration    *prometheus.HistogramVec // api, operation
	sent        *prometheus.CounterVec   // api, client
	retries     *prometheus.CounterVec   // api, client
	rateLimited *prometheus.CounterVec   // api, client
	inFlight    *prometheus.GaugeVec     // api
	planned     *prometheus.GaugeVec     // api
	late        *prometheus.CounterVec   // api
	capped      *prometheus.CounterVec   // api
	maxInFlight *prometheus.GaugeVec     // api
	lag         *prometheus.HistogramVec // api
	probes      *prometheus.CounterVec   // api
	mismatches  *prometheus.CounterVec   // api
	retryAfter  *prometheus.HistogramVec // api
	tokens      *prometheus.CounterVec   // client, code
	runInfo     *prometheus.GaugeVec     // run_id, scenario, api, shard
	runStart    prometheus.Gauge
	runEnd      prometheus.Gauge

	maxClients int
	mu         sync.Mutex
	labels     map[string]string // client id → label
}

func histogram(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:                            name,
		Help:                            help,
		Buckets:                         buckets,
		NativeHistogramBucketFactor:     1.1,
		NativeHistogramMaxBucketNumber:  100,
		NativeHistogramMinResetDuration: time.Hour,
	}, labels)
}

var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// NewMetrics registers the attacker metrics on reg. The client label takes the
// ids of the first maxClientLabels distinct clients (20 when 0) and "other"
// after them.
func NewMetrics(reg prometheus.Registerer, maxClientLabels int) (*Metrics, error) {
	if maxClientLabels <= 0 {
		maxClientLabels = 20
	}
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgload_requests_total",
			Help: "HTTP requests made by the attacker, by API, operation, status code (0 = no answer) and client."},
			[]string{"api", "operation", "code", "client"}),
		duration: histogram("msgload_request_duration_seconds", "Latency of the attacker's HTTP requests.",
			latencyBuckets, "api", "operation"),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgload_messages_sent_total",
			Help: "Messages sent: first attempts only."}, []string{"api", "client"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgload_retries_total",
			Help: "Retried sends (attempts after the first)."}, []string{"api", "client"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgload_rate_limited_total",
			Help: "Answers with HTTP 429."}, []string{"api", "client"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "msgload_requests_in_flight",
			Help: "HTTP requests waiting for an answer."}, []string{"api"}),
		planned: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "msgload_planned_requests_per_second",
			Help: "Rate the pacer plans now, messages per second."}, []string{"api"}),
		late: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgload_late_starts_total",
			Help: "First attempts that left later than planned (coordinated omission)."}, []string{"api"}),
		capped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgload_capped_sends_total",
			Help: "First attempts delayed by the cap on messages in flight (due while the cap was full)."}, []string{"api"}),
		maxInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "msgload_max_in_flight",
			Help: "The cap on messages in flight (0 = none)."}, []string{"api"}),
		lag: histogram("msgload_send_lag_seconds", "Actual minus intended send time of first attempts.",
			[]float64{.0001, .0005, .001, .005, .01, .05, .1, .5, 1, 5, 10, 60}, "api"),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgload_idempotency_probes_total",
			Help: "Idempotency probes: resends of a message with the same externalId."}, []string{"api"}),
		mismatches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgload_idempotency_mismatches_total",
			Help: "Probes answered with another notificationId than the message's."}, []string{"api"}),
		retryAfter: histogram("msgload_retry_after_seconds", "Retry-After values received.",
			[]float64{.1, .5, 1, 2, 5, 10, 30, 60, 120}, "api"),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgload_token_requests_total",
			Help: "Token requests to the identity provider, by client and status code (0 = no answer)."},
			[]string{"client", "code"}),
		runInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "msgload_run_info",
			Help: "Always 1: the run, its scenario and API, and the shard (I/N) of a sharded run (empty otherwise)."}, []string{"run_id", "scenario", "api", "shard"}),
		runStart: prometheus.NewGauge(prometheus.GaugeOpts{Name: "msgload_run_start_timestamp_seconds",
			Help: "Unix time the attack started."}),
		runEnd: prometheus.NewGauge(prometheus.GaugeOpts{Name: "msgload_run_end_timestamp_seconds",
			Help: "Unix time the attack ended; 0 while it runs."}),
		maxClients: maxClientLabels,
		labels:     map[string]string{},
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.sent, m.retries, m.rateLimited,
		m.inFlight, m.planned, m.late, m.capped, m.maxInFlight, m.lag, m.probes, m.mismatches, m.retryAfter, m.tokens,
		m.runInfo, m.runStart, m.runEnd} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register attack metrics: %w", err)
		}
	}
	return m, nil
}

// clientLabel returns the client label for id, assigning one on first use.
func (m *Metrics) clientLabel(id string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.labels[id]; ok {
		return l
	}
	l := otherClient
	if len(m.labels) < m.maxClients {
		l = id
	}
	m.labels[id] = l
	return l
}

// start sets the run's info and pre-creates the known series at zero.
func (m *Metrics) start(o *Options, at time.Time) {
	m.runInfo.WithLabelValues(o.RunID, o.Scenario, o.API, o.Shard).Set(1)
	m.runStart.Set(float64(at.UnixNano()) / 1e9)
	m.runEnd.Set(0)
	api := o.API
	m.inFlight.WithLabelValues(api)
	m.late.WithLabelValues(api)
	m.capped.WithLabelValues(api)
	limit := o.MaxInFlight
	if limit == 0 {
		limit = DefaultMaxInFlight
	}
	m.maxInFlight.WithLabelValues(api).Set(float64(max(limit, 0)))
	m.lag.WithLabelValues(api)
	m.probes.WithLabelValues(api)
	m.mismatches.WithLabelValues(api)
	m.retryAfter.WithLabelValues(api)
	m.duration.WithLabelValues(api, OpSend)
	if o.Poll != nil {
		m.duration.WithLabelValues(api, opCheckStatus)
	}
	for _, c := range o.Clients {
		l := m.clientLabel(c.ID)
		m.sent.WithLabelValues(api, l)
		m.retries.WithLabelValues(api, l)
		m.rateLimited.WithLabelValues(api, l)
		m.requests.WithLabelValues(api, OpSend, "200", l)
		m.requests.WithLabelValues(api, OpSend, "429", l)
		if api == rundir.APINotify {
			m.tokens.WithLabelValues(l, "200")
		}
	}
}

func (m *Metrics) end(at time.Time) { m.runEnd.Set(float64(at.UnixNano()) / 1e9) }

// clientMetrics caches one client's series, so the hot path does not hash labels.
type clientMetrics struct {
	m                          *Metrics
	api, label                 string
	sent, retries, rateLimited prometheus.Counter
	codes                      sync.Map // opCode → prometheus.Counter
}

func (m *Metrics) forClient(api, id string) *clientMetrics {
	if m == nil {
		return nil
	}
	l := m.clientLabel(id)
	return &clientMetrics{m: m, api: api, label: l,
		sent:        m.sent.WithLabelValues(api, l),
		retries:     m.retries.WithLabelValues(api, l),
		rateLimited: m.rateLimited.WithLabelValues(api, l),
	}
}

type opCode struct {
	op   string
	code int
}

func (c *clientMetrics) request(op string, code int) prometheus.Counter {
	key := opCode{op, code}
	if v, ok := c.codes.Load(key); ok {
		return v.(prometheus.Counter)
	}
	var ctr prometheus.Counter
	if op == opToken {
		ctr = c.m.tokens.WithLabelValues(c.label, strconv.Itoa(code))
	} else {
		ctr = c.m.requests.WithLabelValues(c.api, op, strconv.Itoa(code), c.label)
	}
	v, _ := c.codes.LoadOrStore(key, ctr)
	return v.(prometheus.Counter)
}

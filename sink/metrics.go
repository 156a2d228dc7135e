package sink

import (
	"sync"

	"github.com/msgload/msgload/rundir"
	"github.com/prometheus/client_golang/prometheus"
)

// Refusal reasons (label reason of msgload_sink_refused_total).
const (
	refusedTooLarge = "too_large"
	refusedAuth     = "auth"
	refusedMethod   = "method"
)

// Why a call was not written (label reason of msgload_sink_write_errors_total).
const (
	notWrittenFailed  = "failed"  // the write or its fsync failed: a full or failing disk (500)
	notWrittenStalled = "stalled" // the log did not take it in time: stalled storage (503)
	notWrittenClosed  = "closed"  // the sink was closing (503)
)

// maxLabelValues bounds the distinct values a free-form label (a notification
// status) may take; later values are reported as "other".
const maxLabelValues = 20

type metrics struct {
	events       *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	duplicates   *prometheus.CounterVec
	redelivered  *prometheus.CounterVec
	unmatched    *prometheus.CounterVec
	malformed    *prometheus.CounterVec
	unauthorized *prometheus.CounterVec
	refused      *prometheus.CounterVec
	notWritten   *prometheus.CounterVec
	incoming     *prometheus.CounterVec
	failover     *prometheus.CounterVec
	evicted      prometheus.Counter
	writeDur     prometheus.Histogram
	batchSize    prometheus.Histogram

	mu       sync.Mutex
	statuses map[string]bool // webhook statuses seen so far, at most maxLabelValues
}

var routes = []string{rundir.SinkCallback, rundir.SinkIncoming, rundir.SinkWebhook}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	latencyBuckets := []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
	m := &metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sink_events_total",
			Help: "Calls received by the sink, by API, event kind, state and channel (\"none\" when absent).",
		}, []string{"api", "kind", "state", "channel"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:                           "msgload_delivery_latency_seconds",
			Help:                           "Delivery latency from the first attempt's send time (carried in the tag) to the first arrival of each state of a message.",
			Buckets:                        latencyBuckets,
			NativeHistogramBucketFactor:    1.1,
			NativeHistogramMaxBucketNumber: 100,
		}, []string{"api", "channel", "state"}),
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sink_duplicates_total",
			Help: "Events that repeat a (message, state) already received.",
		}, []string{"api"}),
		redelivered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sink_redelivered_total",
			Help: "Events that repeat a (message, state) whose previous arrival the sink refused or held on purpose (fault injection): redelivered on request, not duplicates.",
		}, []string{"api"}),
		unmatched: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sink_unmatched_total",
			Help: "Valid events that carry no msgload tag of this run.",
		}, []string{"api"}),
		malformed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sink_malformed_total",
			Help: "Calls whose body breaks the specification's schema (answered 400, kept in the log).",
		}, []string{"route"}),
		unauthorized: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sink_unauthorized_total",
			Help: "Calls refused by the sink's authentication (answered 401, kept in the log).",
		}, []string{"route"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sink_refused_total",
			Help: "Calls refused before their body was taken, by reason: too_large (413), auth (401), method (405).",
		}, []string{"route", "reason"}),
		notWritten: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sink_write_errors_total",
			Help: "Calls the sink could not write to its event log, by reason: failed (the write or its fsync failed, a full or failing disk: answered 500), stalled (the storage did not take it in time: 503), closed (the sink was closing: 503). The sender may send them again; a run's report makes a message left without its final status then the environment's.",
		}, []string{"reason"}),
		incoming: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sink_incoming_total",
			Help: "Valid incoming messages, by channel.",
		}, []string{"channel"}),
		failover: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "msgload_sink_failover_steps_total",
			Help: "Failover steps seen in status records: a message moving from one channel of its cascade to the next.",
		}, []string{"from", "to"}),
		evicted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "msgload_sink_correlation_evictions_total",
			Help: "Messages forgotten by the bounded correlation table (oldest first); a later event of one is taken as a first arrival.",
		}),
		writeDur: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:                           "msgload_sink_log_write_duration_seconds",
			Help:                           "Time to write (and fsync, by mode) one batch of events to the event log.",
			Buckets:                        []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1},
			NativeHistogramBucketFactor:    1.1,
			NativeHistogramMaxBucketNumber: 100,
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "msgload_sink_log_batch_size",
			Help:    "Events written per batch (per fsync in batch mode).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096},
		}),
		statuses: map[string]bool{},
	}
	for _, c := range []prometheus.Collector{m.events, m.latency, m.duplicates, m.redelivered, m.unmatched, m.malformed,
		m.unauthorized, m.refused, m.notWritten, m.incoming, m.failover, m.evicted, m.writeDur, m.batchSize} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// Known label sets exist at zero.
	for _, api := range []string{rundir.APIMessaging, rundir.APINotify} {
		m.duplicates.WithLabelValues(api)
		m.redelivered.WithLabelValues(api)
		m.unmatched.WithLabelValues(api)
	}
	for _, r := range routes {
		m.malformed.WithLabelValues(r)
		m.unauthorized.WithLabelValues(r)
		for _, reason := range []string{refusedTooLarge, refusedAuth, refusedMethod} {
			m.refused.WithLabelValues(r, reason)
		}
	}
	for _, reason := range []string{notWrittenFailed, notWrittenStalled, notWrittenClosed} {
		m.notWritten.WithLabelValues(reason)
	}
	for c := range incomingChannels {
		m.incoming.WithLabelValues(c)
	}
	for _, s := range states {
		m.events.WithLabelValues(rundir.APIMessaging, rundir.KindCallback, s, "none")
	}
	return m, nil
}

// statusLabel bounds a webhook status to maxLabelValues distinct label values.
func (m *metrics) statusLabel(s string) string {
	if s == "" {
		return "none"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.statuses[s] {
		return s
	}
	if len(m.statuses) >= maxLabelValues || len(s) > 64 {
		return "other"
	}
	m.statuses[s] = true
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

package handlers

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are pitcrew's Prometheus series.
type Metrics struct {
	Deliveries *prometheus.CounterVec // by event and outcome: queued, duplicate, rejected, error
	Callbacks  *prometheus.CounterVec // sandbox callbacks by outcome
	Runs       *prometheus.CounterVec // by kind and event: started, attached, cooldown, completed, not_reproduced, failed
}

// NewMetrics registers pitcrew's series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitcrew_deliveries_total", Help: "GitHub deliveries received, by event and outcome."}, []string{"event", "outcome"}),
		Callbacks:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitcrew_sandbox_callbacks_total", Help: "Sandbox callbacks received, by outcome."}, []string{"outcome"}),
		Runs:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitcrew_runs_total", Help: "Run events, by job kind and event."}, []string{"kind", "event"}),
	}
	reg.MustRegister(m.Deliveries, m.Callbacks, m.Runs)
	return m
}

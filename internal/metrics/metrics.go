// Package metrics holds pitcrew's Prometheus series, shared by the hooks that
// count what arrives and the handlers that count what runs.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are pitcrew's Prometheus series.
type Metrics struct {
	Deliveries *prometheus.CounterVec // by event and outcome: queued, duplicate, rejected, busy, error, replay
	Callbacks  *prometheus.CounterVec // sandbox callbacks by outcome
	// SourceRequests counts requests of outside sources (Datadog, Sentry)
	// by source and outcome: queued, duplicate, ignored, rejected, busy, error.
	SourceRequests *prometheus.CounterVec
	Runs           *prometheus.CounterVec // by kind and event: started, attached, cooldown, completed, not_reproduced, failed

	SweptDeliveries prometheus.Counter     // deliveries read in the app's delivery log
	Redeliveries    *prometheus.CounterVec // by outcome: asked, refused
	Reconciled      prometheus.Counter     // runs without an outcome the reconciler read again
	IssueCapReached prometheus.Counter     // repository-days whose daily cap on opened issues was reached
}

// New registers pitcrew's series on reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitcrew_deliveries_total", Help: "GitHub deliveries received, by event and outcome."}, []string{"event", "outcome"}),
		Callbacks:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitcrew_sandbox_callbacks_total", Help: "Sandbox callbacks received, by outcome."}, []string{"outcome"}),
		Runs:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitcrew_runs_total", Help: "Run events, by job kind and event."}, []string{"kind", "event"}),
	}
	m.SourceRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitcrew_source_requests_total", Help: "Requests of outside alert sources received, by source and outcome."}, []string{"source", "outcome"})
	m.SweptDeliveries = prometheus.NewCounter(prometheus.CounterOpts{Name: "pitcrew_sweeper_deliveries_checked_total", Help: "Deliveries the sweeper read in the app's delivery log."})
	m.Redeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pitcrew_sweeper_redeliveries_total", Help: "Redeliveries the sweeper asked GitHub for, by outcome."}, []string{"outcome"})
	m.Reconciled = prometheus.NewCounter(prometheus.CounterOpts{Name: "pitcrew_reconciler_runs_total", Help: "Started runs the reconciler read again because no outcome had arrived."})
	m.IssueCapReached = prometheus.NewCounter(prometheus.CounterOpts{Name: "pitcrew_issue_cap_reached_total", Help: "Times a repository reached its daily cap on issues pitcrew opens (once per repository and day)."})
	reg.MustRegister(m.Deliveries, m.Callbacks, m.SourceRequests, m.Runs, m.SweptDeliveries, m.Redeliveries, m.Reconciled, m.IssueCapReached)
	return m
}

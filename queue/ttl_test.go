package queue

import (
	"testing"

	"github.com/pitcrew/pitcrew/alerts"
	"github.com/pitcrew/pitcrew/runs"
)

// A body is remembered as long as what it may have started: past that, a
// captured one sent again under a new delivery id would start it again.
func TestABodyIsRememberedAsLongAsTheLedgerKeepsItsRun(t *testing.T) {
	if BodyTTL < runs.Retention {
		t.Fatalf("bodies are remembered %s, runs kept %s: a replay in between starts a run again", BodyTTL, runs.Retention)
	}
	if window := alerts.SentryMaxEventAge + alerts.SentryMaxSkew; AlertRetention < window {
		t.Fatalf("an alert task is kept %s, a Sentry body is accepted over %s: one sent again in between is stored twice", AlertRetention, window)
	}
}

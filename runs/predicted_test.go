package runs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// A test predicted twice keeps its first prediction; a repository keeps
// the most recent MaxPredicted; each comes with the run its key points at.
func TestPredictionsKeepTheFirstAndTheMostRecent(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	key := "flaky:hexpm/hexpm:test/a_test.exs:4"
	if err := l.Predict(ctx, "hexpm/hexpm", []Predicted{{Key: key, Test: "test/a_test.exs:4", PR: 7, At: t0}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Predict(ctx, "hexpm/hexpm", []Predicted{{Key: key, Test: "test/a_test.exs:4", PR: 9, At: t0.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	run, _, err := l.Claim(ctx, newRun(key), time.Hour, 100, Subject{})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := l.PredictedTests(ctx, "Hexpm/Hexpm")
	if err != nil || len(ps) != 1 || ps[0].PR != 7 || ps[0].Run == nil || ps[0].Run.ID != run.ID {
		t.Fatalf("%+v, %v", ps, err)
	}
	var many []Predicted
	for i := 0; i < MaxPredicted+3; i++ {
		many = append(many, Predicted{Key: fmt.Sprintf("flaky:hexpm/hexpm:test/m_test.exs:%d", i+10), PR: 8, At: t0.Add(time.Duration(i+2) * time.Hour)})
	}
	if err := l.Predict(ctx, "hexpm/hexpm", many); err != nil {
		t.Fatal(err)
	}
	ps, err = l.PredictedTests(ctx, "hexpm/hexpm")
	if err != nil || len(ps) != MaxPredicted || ps[0].Key != many[len(many)-1].Key {
		t.Fatalf("%d kept, first %+v, %v", len(ps), ps[0], err)
	}
}

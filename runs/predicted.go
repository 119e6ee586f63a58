package runs

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Predicted is a test pitcrew expects to flake next: a sibling of a fix
// that shares its cause (evidence.FindSiblings), not seen failing yet.
type Predicted struct {
	Key  string    `json:"key"`  // the test's fix key (flaky:<repo>:<test ref>)
	Test string    `json:"test"` // file:line
	Name string    `json:"name,omitempty"`
	Why  string    `json:"why"`
	PR   int       `json:"pr"` // the fix's pull request it was predicted from
	At   time.Time `json:"at"`
	// Commit is the commit whose tests were scanned ("" when unknown).
	Commit string `json:"commit,omitempty"`
	// Run is the run its key points at now (a box ticked), nil when none.
	Run *Run `json:"-"`
}

// MaxPredicted bounds the predictions a repository keeps; the oldest go.
const MaxPredicted = 50

// predictedTTL is how long a prediction stays, as a sighting does.
const predictedTTL = 90 * 24 * time.Hour

func (l *Ledger) predictedKey(repo string) string {
	return l.prefix + "predicted:" + strings.ToLower(repo)
}

// Predict records tests predicted to flake; one already predicted keeps
// its first prediction (its date and pull request).
func (l *Ledger) Predict(ctx context.Context, repo string, ps []Predicted) error {
	if len(ps) == 0 {
		return nil
	}
	key := l.predictedKey(repo)
	pipe := l.rdb.TxPipeline()
	for _, p := range ps {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		pipe.HSetNX(ctx, key, p.Key, b)
	}
	pipe.Expire(ctx, key, predictedTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	return l.trimPredicted(ctx, key)
}

// trimPredicted keeps the MaxPredicted most recent predictions.
func (l *Ledger) trimPredicted(ctx context.Context, key string) error {
	all, err := l.readPredicted(ctx, key)
	if err != nil || len(all) <= MaxPredicted {
		return err
	}
	var drop []string
	for _, p := range all[MaxPredicted:] {
		drop = append(drop, p.Key)
	}
	return l.rdb.HDel(ctx, key, drop...).Err()
}

// PredictedTests are repo's predictions, most recent first, each with
// the run its key points at.
func (l *Ledger) PredictedTests(ctx context.Context, repo string) ([]Predicted, error) {
	ps, err := l.readPredicted(ctx, l.predictedKey(repo))
	if err != nil || len(ps) == 0 {
		return ps, err
	}
	ids := make([]*redis.StringCmd, len(ps))
	if _, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, pr := range ps {
			ids[i] = p.Get(ctx, l.pointerKey(pr.Key))
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	for i := range ps {
		if id := ids[i].Val(); id != "" {
			if run, err := l.Get(ctx, id); err == nil {
				ps[i].Run = &run
			}
		}
	}
	return ps, nil
}

func (l *Ledger) readPredicted(ctx context.Context, key string) ([]Predicted, error) {
	h, err := l.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	out := make([]Predicted, 0, len(h))
	for _, v := range h {
		var p Predicted
		if json.Unmarshal([]byte(v), &p) == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.After(out[j].At)
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

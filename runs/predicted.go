package runs

import (
	"context"
	"encoding/json"
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
	n := pipe.HLen(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	if n.Val() <= MaxPredicted {
		return nil // the common case: one round trip
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
	// Each key's run in one round trip, as FlakyTests reads them.
	res, err := predictedRunsScript.Run(ctx, l.rdb, nil, append([]any{l.prefix}, keysOf(ps)...)...).Slice()
	if err != nil {
		return nil, err
	}
	for i, row := range res {
		f, _ := row.([]any)
		if i >= len(ps) || len(f) != 3 || str(f[0]) == "" {
			continue
		}
		if run, err := decodeRun(str(f[0]), str(f[1]), str(f[2])); err == nil {
			ps[i].Run = &run
		}
	}
	return ps, nil
}

func keysOf(ps []Predicted) []any {
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = p.Key
	}
	return out
}

// predictedRunsScript reads the run each key (ARGV[2..]) points at:
// {id, state, json} each, {”, ”, ”} for none.
var predictedRunsScript = redis.NewScript(`
local p = ARGV[1]
local out = {}
for i = 2, #ARGV do
  local id = redis.call('GET', p .. 'key:' .. ARGV[i]) or ''
  local run = {'', ''}
  if id ~= '' then run = redis.call('HMGET', p .. 'run:' .. id, 'state', 'json') end
  table.insert(out, {id, run[1] or '', run[2] or ''})
end
return out
`)

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

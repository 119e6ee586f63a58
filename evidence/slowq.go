package evidence

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SlowQueriesName is the machine-readable artifact a profiling run leaves
// beside its Markdown report; SlowQueriesSchema is its JSON Schema, which
// the prompt shows and ParseSlowQueries holds it to.
const SlowQueriesName = "slow-queries.json"

//go:embed slow-queries.schema.json
var SlowQueriesSchema string

// SlowQueries is a profiling run's measurements: the pages it exercised
// and the slow queries it found, each measured before and after the
// migration on the same seeded data, with the fix it tried.
type SlowQueries struct {
	BeforeCommit string      `json:"before_commit"`
	AfterCommit  string      `json:"after_commit"`
	ThresholdMS  float64     `json:"threshold_ms"`
	Seed         Seed        `json:"seed"`
	Pages        []PageTime  `json:"pages"`
	Queries      []SlowQuery `json:"queries"`
}

// Seed is what the run seeded, and how it compares with production.
type Seed struct {
	Tables []struct {
		Table string `json:"table"`
		Rows  int64  `json:"rows"`
	} `json:"tables"`
	MaterializedViewsRefreshed *bool   `json:"materialized_views_refreshed"`
	Production                 *string `json:"production"`
}

// PageTime is a page's time before and after the migration.
type PageTime struct {
	Page     string  `json:"page"`
	BeforeMS float64 `json:"before_ms"`
	AfterMS  float64 `json:"after_ms"`
}

// SlowQuery is one slow query: where Ecto builds it, how often a page
// runs it, its time before and after the migration, and the fix tried.
type SlowQuery struct {
	Fingerprint string   `json:"fingerprint"`
	SQL         string   `json:"sql"`
	Pages       []string `json:"pages"`
	Ecto        struct {
		Function string `json:"function"`
		File     string `json:"file"`
		Line     int    `json:"line"`
	} `json:"ecto"`
	CallsPerPage   int      `json:"calls_per_page"`
	Before         Measure  `json:"before"`
	After          Measure  `json:"after"`
	IndexesUsed    []string `json:"indexes_used"`
	IndexesSkipped []string `json:"indexes_skipped"`
	Fix            *Fix     `json:"fix"`
}

// Measure is one timing and the EXPLAIN (ANALYZE) output quoted for it.
type Measure struct {
	MS   float64 `json:"ms"`
	Plan *string `json:"plan"`
}

// Fix is the change tried for a slow query, measured on the same data.
type Fix struct {
	Kind      string     `json:"kind"` // index, rewrite, preload, join, other
	Change    string     `json:"change"`
	Measure   Measure    `json:"measure"`
	SameRows  *bool      `json:"same_rows"`
	WriteCost *WriteCost `json:"write_cost"`
}

// WriteCost is an index's cost on the writes of the app's hot paths.
type WriteCost struct {
	Tables    []string `json:"tables"`
	WithoutMS float64  `json:"without_ms"`
	WithMS    float64  `json:"with_ms"`
}

// maxSlowQueries bounds the artifact read.
const maxSlowQueries = 1 << 20

var slowQueriesSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(SlowQueriesSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("slow-queries.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("slow-queries.schema.json")
})

// ParseSlowQueries reads a slow-queries.json, held to its schema; the
// error says, in a line, what does not fit.
func ParseSlowQueries(data []byte) (SlowQueries, error) {
	if len(data) > maxSlowQueries {
		return SlowQueries{}, fmt.Errorf("%s is larger than %d bytes", SlowQueriesName, maxSlowQueries)
	}
	schema, err := slowQueriesSchema()
	if err != nil {
		return SlowQueries{}, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return SlowQueries{}, fmt.Errorf("%s is not JSON: %v", SlowQueriesName, err)
	}
	if err := schema.Validate(doc); err != nil {
		return SlowQueries{}, fmt.Errorf("%s does not fit its schema: %s", SlowQueriesName, firstSchemaError(err))
	}
	var q SlowQueries
	if err := json.Unmarshal(data, &q); err != nil {
		return SlowQueries{}, fmt.Errorf("%s: %v", SlowQueriesName, err)
	}
	return q, nil
}

// firstSchemaError is the deepest first cause of a validation error, in
// one line: where, and what.
func firstSchemaError(err error) string {
	var v *jsonschema.ValidationError
	if !errors.As(err, &v) {
		return err.Error()
	}
	for len(v.Causes) > 0 {
		v = v.Causes[0]
	}
	at := "/" + strings.Join(v.InstanceLocation, "/")
	msg := strings.ReplaceAll(v.Error(), "\n", " ")
	if i := strings.Index(msg, "': "); i >= 0 { // after "at '/where'"
		msg = msg[i+3:]
	}
	return at + ": " + msg
}

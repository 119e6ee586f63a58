package evidence

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// runRules runs every rule over every change, on every core: a large
// diff's rules cost as much as its parse. A rule reads its change and
// writes nothing to it (what is read once is read under a sync.Once), so
// the findings are those of running the rules one by one, in that order.
// A rule's panic is the caller's, as it would be run one by one.
func runRules(changes []*change, rules []rule) []Finding {
	found := make([][]Finding, len(changes)*len(rules))
	var next atomic.Int64
	var panicked atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(found)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					panicked.CompareAndSwap(nil, p)
				}
			}()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(found) || panicked.Load() != nil {
					return
				}
				found[i] = rules[i%len(rules)](*changes[i/len(rules)])
			}
		}()
	}
	wg.Wait()
	if p := panicked.Load(); p != nil {
		panic(p)
	}
	var out []Finding
	for _, f := range found {
		out = append(out, f...)
	}
	return out
}

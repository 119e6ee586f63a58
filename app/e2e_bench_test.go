package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/sandbox"
)

// BenchmarkEndToEnd drives each job from signed delivery to started session
// against the fakes and a real Redis (set REDIS_URL), and reports triggers
// per second, GitHub API calls per trigger (installation tokens not
// counted; for labels and merges, up to the outcome on GitHub) and Redis
// commands and round trips per trigger.
//
//	REDIS_URL=redis://127.0.0.1:6379 go test ./app -run '^$' -bench EndToEnd -benchtime 200x
func BenchmarkEndToEnd(b *testing.B) {
	jobs := []struct {
		name    string
		prepare func(h *harness, i int) (event string, payload []byte)
		outcome func(h *harness, i int) bool // the answer is on GitHub; nil: count to the session only
	}{
		{"label", func(h *harness, i int) (string, []byte) {
			return "issues", testenv.LabeledEvent(b, "flaky", "alice", 1000+i, fmt.Sprintf("test/bench/t%d_test.exs:%d", i, i+1), "")
		}, func(h *harness, i int) bool { return h.commentContains(1000+i, "/hexpm/hexpm/pull/1")() }},
		{"rerun", func(h *harness, i int) (string, []byte) {
			run := int64(5000 + i)
			log := strings.ReplaceAll(testenv.ExUnitLog(b, "gha_fail_seed_1.txt"), "test/racy_b_test.exs:25", fmt.Sprintf("test/bench/r%d_test.exs:25", i))
			h.gh.SetJob(run, 1, run, "test", "failure", log)
			h.gh.SetJob(run, 2, run+1<<20, "test", "success", testenv.ExUnitLog(b, "gha_pass_seed_2.txt"))
			return "workflow_run", testenv.RerunPassedEvent(b, run, fmt.Sprintf("%040x", run))
		}, nil},
		{"in-job retry", func(h *harness, i int) (string, []byte) {
			run := int64(7000 + i)
			log := strings.ReplaceAll(testenv.ExUnitLog(b, "gha_pm_in_job_retry.txt"), "test/racy_b_test.exs:25", fmt.Sprintf("test/bench/j%d_test.exs:25", i))
			h.gh.SetJob(run, 1, run, "test", "success", log)
			h.gh.Annotate(run, fmt.Sprintf("test/bench/j%d_test.exs", i), 25, "failure", "test get_env/2 sees mode b after work (RacyBTest)")
			h.gh.SetCheckSuite(run<<8, run)
			return "workflow_run", testenv.WorkflowRunEvent(b, run, 1, run<<8, fmt.Sprintf("%040x", run))
		}, nil},
		{"merge", func(h *harness, i int) (string, []byte) {
			h.gh.SetPullFiles(2000+i, fmt.Sprintf("added priv/repo/migrations/2026120%d_m.exs", i%10))
			return "pull_request", testenv.MergedPullEvent(b, 2000+i, fmt.Sprintf("%040x", 9000+i))
		}, func(h *harness, i int) bool { return h.commentContains(2000+i, "ended without producing")() }},
	}
	for _, job := range jobs {
		b.Run(job.name, func(b *testing.B) {
			h := newHarness(b, false, func(o *Options) { o.Concurrency = 16 })
			h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "daily_limit: 1000\n")
			counter := &testenv.Trips{}
			h.redis.AddHook(counter)
			h.startWorker(h.app)
			events := make([]string, b.N)
			payloads := make([][]byte, b.N)
			for i := range payloads {
				events[i], payloads[i] = job.prepare(h, i)
			}
			b.ResetTimer()
			start := time.Now()
			for i := range payloads {
				if code := h.deliver(events[i], testenv.DeliveryID(), payloads[i]); code != 202 {
					b.Fatalf("answered %d", code)
				}
			}
			h.eventually("every session started", func() bool { return h.sandbox.SessionCount() == b.N })
			elapsed := time.Since(start)
			b.StopTimer()
			if job.outcome != nil {
				// Each fix opens its own pull request, as agents do.
				for k, id := range h.sandbox.SessionIDs() {
					h.finish(id, sandbox.StatusCompleted, strings.Replace(fixedAnswer, "/pull/1234", fmt.Sprintf("/pull/%d", 100000+k), 1))
				}
				for i := 0; i < b.N; i++ {
					h.eventually("the outcome", func() bool { return job.outcome(h, i) })
				}
			}
			calls := 0
			for _, r := range h.gh.Requests() {
				if !strings.HasSuffix(r.Operation, "/access_tokens") {
					calls++
				}
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "triggers/s")
			b.ReportMetric(float64(calls)/float64(b.N), "github-calls/trigger")
			b.ReportMetric(float64(counter.Commands.Load())/float64(b.N), "redis-cmds/trigger")
			b.ReportMetric(float64(counter.RoundTrips.Load())/float64(b.N), "redis-trips/trigger")
		})
	}
}

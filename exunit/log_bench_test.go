package exunit

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// bigLog builds a ~50 MB log from real outputs repeated, the size of a
// long CI job's log.
func bigLog(tb testing.TB) []byte {
	var parts [][]byte
	for _, name := range []string{"gha_fail_seed_1.txt", "fail_seed_33.txt", "gha_color_fail_seed_1.txt", "trace_doctest_fail_seed_7.txt", "pass_seed_2.txt",
		"gha_pm_many_failures.txt", "gha_pm_properties_fail.txt", "gha_pm_umbrella_fail.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata/logs", name))
		if err != nil {
			tb.Fatal(err)
		}
		parts = append(parts, b)
	}
	unit := bytes.Join(parts, nil)
	return bytes.Repeat(unit, 50<<20/len(unit)+1)
}

// BenchmarkParseLog reports the parser's throughput (MB/s) and
// allocations on a 50 MB log; BenchmarkGrepCount is the baseline beside it:
// `grep -c` counting failure headers in the same file.
//
//	go test ./exunit -run '^$' -bench 'ParseLog|GrepCount' -benchmem
func BenchmarkParseLog(b *testing.B) {
	data := bigLog(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := ParseLog(bytes.NewReader(data))
		if err != nil || len(rep.Failures) == 0 {
			b.Fatal(err)
		}
	}
}

func BenchmarkGrepCount(b *testing.B) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		testenv.SkipWithout(b, "grep", "apt-get install -y grep")
	}
	data := bigLog(b)
	file := filepath.Join(b.TempDir(), "big.log")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if out, err := exec.Command(grep, "-c", `^ *[0-9]*) test `, file).Output(); err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLogMemory reports the parser's peak heap while it streams
// logs of 50 and 400 MB, generated as they are read: it stays flat.
func BenchmarkParseLogMemory(b *testing.B) {
	unit := bytes.Clone(bigLog(b)[:8<<20])
	for _, size := range []int{50 << 20, 400 << 20} {
		b.Run(strconv.Itoa(size>>20)+"MB", func(b *testing.B) {
			b.SetBytes(int64(size))
			var peak uint64
			for i := 0; i < b.N; i++ {
				runtime.GC()
				var base runtime.MemStats
				runtime.ReadMemStats(&base)
				stop := make(chan struct{})
				sampled := make(chan uint64)
				go func() {
					var m runtime.MemStats
					var max uint64
					for {
						runtime.ReadMemStats(&m)
						max = maxUint(max, m.HeapInuse)
						select {
						case <-stop:
							sampled <- max - min(max, base.HeapInuse)
							return
						case <-time.After(5 * time.Millisecond):
						}
					}
				}()
				if _, err := ParseLog(io.LimitReader(repeatReader(unit), int64(size))); err != nil {
					b.Fatal(err)
				}
				close(stop)
				peak = maxUint(peak, <-sampled)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

func maxUint(a, b uint64) uint64 { return max(a, b) }

// repeatReader reads unit over and over, without holding more of it.
func repeatReader(unit []byte) io.Reader {
	off := 0
	return readerFunc(func(p []byte) (int, error) {
		n := copy(p, unit[off:])
		off = (off + n) % len(unit)
		return n, nil
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func FuzzParseLog(f *testing.F) {
	for _, name := range []string{"fail_seed_33.txt", "gha_color_fail_seed_1.txt", "setup_all_and_test_fail_seed_1.txt", "umbrella_fail.txt", "compile_error_test_file.txt", "handmade_cr_overwrite.txt",
		"gha_pm_properties_fail.txt", "gha_pm_umbrella_cd_fail.txt", "absolute_unknown_fail.txt", "gha_pm_in_job_retry.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata/logs", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range versionSamples {
		f.Add([]byte(s))
		f.Add([]byte(actionsLog(s, "mix test || mix test --failed")))
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		rep, err := ParseLog(bytes.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Failures) > MaxFailures || len(rep.Runs) > MaxRuns {
			t.Fatalf("%d failures and %d runs kept", len(rep.Failures), len(rep.Runs))
		}
		for _, f := range rep.Failures {
			if f.Invocation < 0 || f.Invocation >= len(rep.Runs) || len(f.Message) > MaxMessageLines {
				t.Fatalf("bad failure %+v with %d runs", f, len(rep.Runs))
			}
		}
		for _, r := range rep.Runs {
			if r.Format == Format120 && (r.Passed > r.Total || r.Failures != r.Total-r.Passed || len(r.ByType) > maxTypes) {
				t.Fatalf("a 1.20 summary that does not add up: %+v", r)
			}
		}
		for _, f := range rep.Flaky() {
			if _, err := ParseTestRef(f.File + ":" + strconv.Itoa(f.Line)); err != nil {
				t.Fatalf("flaky candidate with an invalid reference: %+v", f)
			}
		}
	})
}

// Command pitcrew-load sends correctly signed GitHub webhook deliveries, each
// with a unique delivery id, to a URL at a fixed rate (open loop) or from a
// fixed number of concurrent senders, and reports throughput, latency
// percentiles, errors, the server's peak memory and its own CPU time per
// delivery. Requests are serialised once and written on kept-alive
// connections (sender.go), so the generator leaves the shared cores to the
// server as far as it can.
//
//	pitcrew-load -url http://127.0.0.1:8080/api/github/hook -secret S -rate 500 -duration 10s -pid 1234
//
// With -serve-github ADDR it instead serves the one GitHub call pitcrew
// makes at start-up (GET /app), so pitcrew can be started for an intake
// benchmark without GitHub.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Result is what one load run measured.
type Result struct {
	Sent       int64   `json:"sent"`
	Errors     int64   `json:"errors"` // transport errors and non-2xx answers
	Seconds    float64 `json:"seconds"`
	Throughput float64 `json:"throughput_per_s"` // 2xx answers per second
	P50        float64 `json:"p50_ms"`
	P90        float64 `json:"p90_ms"`
	P99        float64 `json:"p99_ms"`
	P999       float64 `json:"p999_ms"`
	PeakRSSMiB float64 `json:"peak_rss_mib,omitempty"`
	// SenderCPU is this generator's own CPU time per delivery sent, in µs:
	// on a shared machine it is what the server under test cannot use.
	SenderCPU float64 `json:"sender_cpu_us"`
}

func main() {
	url := flag.String("url", "", "webhook URL")
	secret := flag.String("secret", "", "webhook secret")
	event := flag.String("event", "issues", "X-GitHub-Event")
	payloadFile := flag.String("payload", "testdata/webhooks/issues.labeled.json", "payload (a real delivery's body)")
	rate := flag.Int("rate", 0, "deliveries per second (open loop); 0 uses -concurrency")
	concurrency := flag.Int("concurrency", 8, "concurrent senders when -rate is 0")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	pid := flag.Int("pid", 0, "server process whose peak RSS (VmHWM) to report")
	serveGitHub := flag.String("serve-github", "", "serve GET /app on this address instead of sending load")
	flag.Parse()
	if *serveGitHub != "" {
		log.Fatal(http.ListenAndServe(*serveGitHub, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":1,"slug":"pitcrew","name":"pitcrew"}`)
		})))
	}
	payload, err := os.ReadFile(*payloadFile)
	if err != nil || *url == "" || *secret == "" {
		log.Fatalf("need -url, -secret and a readable -payload: %v", err)
	}
	t, err := newTemplate(*url, *secret, *event, compact(payload))
	if err != nil {
		log.Fatal(err)
	}
	res := run(t, *rate, *concurrency, *duration)
	if *pid > 0 {
		res.PeakRSSMiB = peakRSS(*pid)
	}
	json.NewEncoder(os.Stdout).Encode(res)
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

func run(t *template, rate, concurrency int, duration time.Duration) Result {
	var sent, errs atomic.Int64
	var mu sync.Mutex
	latencies := make([]time.Duration, 0, 1<<16)
	send := func(s *sender, scheduled time.Time) {
		status, err := s.send()
		// Open loop: latency counts from when the delivery was due, so a
		// server that falls behind is charged for the wait.
		d := time.Since(scheduled)
		sent.Add(1)
		if err != nil || status < 200 || status > 299 {
			errs.Add(1)
			return
		}
		mu.Lock()
		latencies = append(latencies, d)
		mu.Unlock()
	}
	pool := newSenderPool(t)
	start, cpuStart := time.Now(), ownCPU()
	var wg sync.WaitGroup
	if rate > 0 {
		interval := time.Second / time.Duration(rate)
		for next := start; time.Since(start) < duration; next = next.Add(interval) {
			time.Sleep(time.Until(next))
			wg.Add(1)
			go func(due time.Time) {
				defer wg.Done()
				s := pool.get()
				send(s, due)
				pool.put(s)
			}(next)
		}
	} else {
		for i := 0; i < concurrency; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := t.newSender()
				defer s.close()
				for time.Since(start) < duration {
					send(s, time.Now())
				}
			}()
		}
	}
	wg.Wait()
	pool.closeAll()
	elapsed := time.Since(start).Seconds()
	senderCPU := (ownCPU() - cpuStart).Seconds() * 1e6 / float64(max(sent.Load(), 1))
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		if len(latencies) == 0 {
			return 0
		}
		return float64(latencies[min(len(latencies)-1, int(p*float64(len(latencies))))].Microseconds()) / 1000
	}
	return Result{Sent: sent.Load(), Errors: errs.Load(), Seconds: elapsed, Throughput: float64(len(latencies)) / elapsed,
		P50: pct(0.50), P90: pct(0.90), P99: pct(0.99), P999: pct(0.999), SenderCPU: senderCPU}
}

// ownCPU is the user and system CPU time this process has used.
func ownCPU() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// peakRSS reads a process's high-water resident memory from /proc.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

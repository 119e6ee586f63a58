package queue

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// BenchmarkAppendDelivery is what compressing a delivery costs the
// intake, and what it leaves Redis to store (stored-bytes).
func BenchmarkAppendDelivery(b *testing.B) {
	body, err := os.ReadFile("../testdata/webhooks/issues.labeled.json")
	if err != nil {
		b.Fatal(err)
	}
	var p []byte
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		p = AppendDelivery(p[:0], "issues", "72d3162e-1", body)
	}
	b.ReportMetric(float64(len(p)), "stored-bytes")
}

// BenchmarkEnqueue stores issues.labeled deliveries from 64 goroutines as
// the intake does, side by side: as JSON one round trip each (the intake
// before the compression), compressed one round trip each, and compressed
// through Batched. redis-µs/op is Redis's own CPU time per delivery (INFO
// cpu), what decides how many deliveries a Redis takes.
//
//	REDIS_URL=redis://127.0.0.1:6379 go test ./queue -run '^$' -bench Enqueue -benchtime 20000x
func BenchmarkEnqueue(b *testing.B) {
	body, err := os.ReadFile("../testdata/webhooks/issues.labeled.json")
	if err != nil {
		b.Fatal(err)
	}
	plain := func(c redis.UniversalClient) redis.UniversalClient { return c }
	for _, c := range []struct {
		name    string
		payload []byte
		wrap    func(redis.UniversalClient) redis.UniversalClient
	}{
		{"json", append([]byte("issues\n72d3162e\n"), body...), plain},
		{"compressed", AppendDelivery(nil, "issues", "72d3162e", body), plain},
		{"compressed-batched", AppendDelivery(nil, "issues", "72d3162e", body), Batched},
	} {
		b.Run(c.name, func(b *testing.B) {
			rdb := testenv.Redis(b)
			q := asynq.NewClientFromRedisClient(c.wrap(rdb))
			var n atomic.Int64
			before := redisCPU(b, rdb)
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := "bench-" + strconv.FormatInt(n.Add(1), 10)
					if _, err := q.Enqueue(DeliveryTask(id, c.payload)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric((redisCPU(b, rdb)-before)*1e6/float64(b.N), "redis-µs/op")
		})
	}
}

// redisCPU is the CPU time, in seconds, the Redis server has used.
func redisCPU(b *testing.B, rdb *redis.Client) float64 {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	found := 0
	for s := bufio.NewScanner(strings.NewReader(info)); s.Scan(); {
		k, v, _ := strings.Cut(strings.TrimSpace(s.Text()), ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatal(err)
			}
			total += f
			found++
		}
	}
	if found != 2 {
		b.Skip("this Redis does not report its CPU time (miniredis): set REDIS_URL")
	}
	return total
}

// Package server is pitcrew assembled: the routes (the hooks, health,
// metrics, the status page), the queue worker and its task handlers, the
// periodic work, and replay. It is the only package that imports handlers
// besides cmd/pitcrew: handlers decide, this package carries.
package app

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/app/ops"
	"github.com/pitcrew/pitcrew/handlers"
	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/durable"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/sandbox"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/dashboard"
)

// Options is everything the app is built from. cmd/pitcrew fills it from
// the environment; tests fill it with fakes.
type Options struct {
	WebhookSecret     string // GitHub App webhook secret; must not be empty
	RushWebhookSecret string
	AppSlug           string
	ClientCreator     githubapp.ClientCreator
	Redis             redis.UniversalClient
	Sandbox           work.Sandbox
	Logger            zerolog.Logger
	Registry          *prometheus.Registry

	// Concurrency is how many tasks of each queue are handled at once,
	// default 10: deliveries (and outside alerts), and outcomes (with
	// periodic work) on workers of their own, so a burst of deliveries does
	// not hold them up.
	Concurrency  int
	PollInterval time.Duration // how often an idle worker looks for tasks, default 200 ms
	// SourceEnv holds the variables outside sources read (SourceEnvKeys),
	// by name: their secrets and their maps of names to repositories.
	SourceEnv map[string]string
	// EmbeddedRedis says Redis is the in-process one (shown on the status
	// page); StatusToken protects the status page.
	EmbeddedRedis bool
	StatusToken   string
	// MaxRunAge: see work.Env. StaleAfter: see Reconciler. Schedule: how often
	// the periodic tasks run. SweepLookBack: how far back the delivery
	// sweeper reads (default 3 days).
	MaxRunAge, StaleAfter, SweepLookBack time.Duration
	Schedule                             queue.Schedule
	// DashboardEvery is the window whose signals make one edit of a
	// repository's dashboard (default 15 s); CIStartWithin and
	// CIRunWithin: see work.Env.
	DashboardEvery, CIStartWithin, CIRunWithin time.Duration
	// ShutdownTimeout is how long tasks in flight may run after Shutdown
	// before they are handed back to the queue; default 20 s.
	ShutdownTimeout time.Duration
}

// App is pitcrew assembled: the HTTP routes and the queue worker.
type App struct {
	Handler http.Handler
	Ledger  *runs.Ledger

	queue        *asynq.Client
	servers      []*asynq.Server // one per queue
	mux          *asynq.ServeMux
	schedule     queue.Schedule
	log          zerolog.Logger
	stopPeriodic context.CancelFunc
	unverified   *hook.Budget // what unverified bodies hold now
}

// NewApp wires the handlers together.
func NewApp(o Options) (*App, error) {
	if o.WebhookSecret == "" {
		return nil, errors.New("the GitHub webhook secret is empty: signature checks would be off")
	}
	verifier, err := sandbox.NewVerifier(o.RushWebhookSecret)
	if err != nil {
		return nil, err
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 10
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 20 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 200 * time.Millisecond
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	counters := metrics.New(o.Registry)
	ledger := runs.NewLedger(o.Redis)
	// With replicas, a 2xx and a claim wait until a replica has the write.
	// The embedded Redis has none, and does not say.
	var replicated *durable.Waiter
	if !o.EmbeddedRedis {
		replicated = &durable.Waiter{Redis: o.Redis}
		ledger.WaitForReplicas(replicated)
	}
	tasks := asynq.NewClientFromRedisClient(o.Redis)
	// The routes' concurrent enqueues share round trips (queue.Batched).
	// The worker's do not: a round carries no caller's context, which the
	// ledger's held status saves go by (runs.HoldStatusSaves).
	intakeTasks := asynq.NewClientFromRedisClient(queue.Batched(o.Redis))
	if o.DashboardEvery <= 0 {
		o.DashboardEvery = 15 * time.Second
	}
	base := handlers.NewEnv(work.Env{Clients: github.NewClients(o.ClientCreator), Ledger: ledger, Sandbox: o.Sandbox, Metrics: counters, AppSlug: o.AppSlug,
		MaxRunAge: o.MaxRunAge, Dashboards: &dashboards{queue: tasks, every: o.DashboardEvery}, Deadlines: ciDeadlines{tasks}, CIStartWithin: o.CIStartWithin, CIRunWithin: o.CIRunWithin})

	worker := NewDeliveryWorker(o.Redis, ledger, handlers.EventHandlers(base)...)
	worker.Metrics, worker.CachedReads = counters, handlers.CachedReads
	mux := asynq.NewServeMux()
	mux.Use(func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			// A task's writes may take the status lock it shows next in
			// their own round trip (runs.WithLocksAhead).
			ctx, release := runs.WithLocksAhead(ctx)
			defer release()
			return next.ProcessTask(o.Logger.WithContext(ctx), t)
		})
	})
	mux.Handle(queue.TaskGitHubDelivery, worker)
	mux.Handle(queue.TaskGitHubDeliveryJSON, worker)
	refresher := &handlers.SessionRefresher{Env: base}
	mux.HandleFunc(queue.TaskSessionRefresh, func(ctx context.Context, t *asynq.Task) error {
		task, err := queue.DecodeRefresh(t.Payload())
		if err != nil {
			return queue.Permanent(err)
		}
		return refresher.Refresh(ctx, task)
	})
	mux.HandleFunc(queue.TaskDashboard, func(ctx context.Context, t *asynq.Task) error {
		d, err := queue.DecodeDashboard(t.Payload())
		if err != nil {
			return queue.Permanent(err)
		}
		err = dashboard.Refresh(ctx, &base, d.Repo, d.InstallationID)
		if github.WillNotChange(err) { // issues off, the app removed, ...: the next window tries again
			return queue.Permanent(err)
		}
		return err
	})
	mux.HandleFunc(queue.TaskCIDeadline, ciDeadline(&base))
	mux.Handle(queue.TaskRefreshDashboards, &ops.DashboardSweep{Ledger: ledger, Queue: tasks, Every: o.DashboardEvery})
	mux.Handle(queue.TaskReconcileRuns, &ops.Reconciler{Ledger: ledger, Queue: tasks, Metrics: counters, Now: base.Now, StaleAfter: o.StaleAfter})
	mux.Handle(queue.TaskSweepDeliveries, &ops.DeliverySweeper{AppClient: o.ClientCreator.NewAppClient, Redis: o.Redis, Metrics: counters, LookBack: o.SweepLookBack})

	inspector := asynq.NewInspectorFromRedisClient(o.Redis)
	unverified := &hook.Budget{}
	intake := &hook.Intake{Secret: []byte(o.WebhookSecret), Queue: intakeTasks, Inspector: inspector, Events: worker.Events(), Metrics: counters, Unverified: unverified,
		Ignored: handlers.Ignored, Replicated: replicated}

	o.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pitcrew_queue_depth", Help: "Tasks waiting on the durable queue (pending, scheduled and retrying).",
	}, func() float64 { return queue.Depth(inspector) }))

	routes := http.NewServeMux()
	routes.Handle("POST /api/github/hook", hook.RequireSHA256(http.MaxBytesHandler(intake, hook.MaxGitHubBody), o.Logger))
	for _, s := range handlers.Sources() {
		set, err := s.Settings(o.SourceEnv)
		if err != nil {
			return nil, err
		}
		routes.Handle("POST /api/"+s.Name+"/hook", &hook.Outside{Source: &s.Source, Secret: set.Secret, Queue: intakeTasks, Metrics: counters, Log: o.Logger, Unverified: unverified, Replicated: replicated})
		mux.HandleFunc(s.TaskType(), func(ctx context.Context, t *asynq.Task) error { return s.Handle(ctx, &base, set, t.Payload()) })
	}
	routes.Handle("POST /api/rush/hook", &hook.SandboxCallbacks{Verifier: verifier, Ledger: ledger, Queue: intakeTasks, Metrics: counters, Logger: o.Logger, Unverified: unverified, Replicated: replicated})
	status := &StatusPage{Token: o.StatusToken, AppSlug: o.AppSlug, Embedded: o.EmbeddedRedis, Ledger: ledger,
		Inspector: inspector, AppClient: o.ClientCreator.NewAppClient, SourceOf: handlers.SourceTitle}
	routes.Handle("GET /{$}", status)
	routes.HandleFunc("GET /flaky", status.Flaky)
	routes.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	routes.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		if err := o.Redis.Ping(ctx).Err(); err != nil {
			http.Error(w, "redis unreachable: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		// Writes taken now must reach a replica (a failover in progress, a
		// replica lagging): the sender would get 503s.
		if err := replicated.Wait(ctx); err != nil {
			http.Error(w, "redis writes are not reaching a replica: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	routes.Handle("GET /metrics", promhttp.HandlerFor(o.Registry, promhttp.HandlerOpts{}))

	// One server per queue rather than one with weighted queues: each
	// looks for a task with one round trip (asynq tries a server's queues
	// one by one), and outcomes keep workers of their own.
	var servers []*asynq.Server
	for _, q := range []string{queue.QueueGitHub, queue.QueueOutcome} {
		servers = append(servers, asynq.NewServerFromRedisClient(o.Redis, asynq.Config{
			Concurrency:       o.Concurrency,
			Queues:            map[string]int{q: 1},
			TaskCheckInterval: o.PollInterval,
			ShutdownTimeout:   o.ShutdownTimeout,
			Logger:            queue.NewLogger(o.Logger),
			ErrorHandler:      giveUpLog(o.Logger),
			RetryDelayFunc:    queue.RetryDelay,
			// Session polls are scheduled tasks; look for due ones often.
			DelayedTaskCheckInterval: time.Second,
		}))
	}
	if o.Schedule.SweepEvery <= 0 {
		o.Schedule.SweepEvery = 5 * time.Minute
	}
	if o.Schedule.ReconcileEvery <= 0 {
		o.Schedule.ReconcileEvery = 2 * time.Minute
	}
	if o.Schedule.DashboardsEvery <= 0 {
		o.Schedule.DashboardsEvery = 6 * time.Hour
	}
	return &App{Handler: withLogger(routes, o.Logger), Ledger: ledger, queue: tasks, servers: servers, mux: mux, schedule: o.Schedule, log: o.Logger, unverified: unverified}, nil
}

// giveUpLog is the queue's error handler: when a task fails for the last
// time (its retries spent, or its error says retrying cannot help), it
// logs one error line with the task's type, id, queue and retry count and
// the cause, which asynq's own "Retry exhausted" line leaves out. Not the
// payload: it may hold secrets, or a large body.
func giveUpLog(log zerolog.Logger) asynq.ErrorHandler {
	return asynq.ErrorHandlerFunc(func(ctx context.Context, t *asynq.Task, err error) {
		if errors.Is(err, asynq.RevokeTask) || !queue.LastAttempt(ctx) && !errors.Is(err, asynq.SkipRetry) {
			return
		}
		retried, _ := asynq.GetRetryCount(ctx)
		maxRetry, _ := asynq.GetMaxRetry(ctx)
		q, _ := asynq.GetQueueName(ctx)
		log.Error().Err(err).Str("component", "queue").Str("task_type", t.Type()).Str("task_id", queue.TaskID(ctx)).
			Str("queue", q).Int("retried", retried).Int("max_retry", maxRetry).Msg("task given up")
	})
}

// StartWorker starts taking tasks off the queue, and scheduling the
// periodic ones, in the background.
func (a *App) StartWorker() error {
	for i, s := range a.servers {
		if err := s.Start(a.mux); err != nil {
			for _, started := range a.servers[:i] {
				started.Shutdown()
			}
			return err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.stopPeriodic = cancel
	go queue.RunPeriodic(ctx, a.queue, a.schedule, a.log)
	return nil
}

// Shutdown stops the worker: tasks in flight get the shutdown timeout to
// finish, and those that do not are handed back to the queue for another
// worker.
func (a *App) Shutdown() {
	if a.stopPeriodic != nil {
		a.stopPeriodic()
		var wg sync.WaitGroup
		for _, s := range a.servers {
			wg.Add(1)
			go func() { defer wg.Done(); s.Shutdown() }()
		}
		wg.Wait()
	}
	a.queue.Close()
}

// dashboards schedules dashboard refreshes on the queue, one per
// repository and window. Within a window a replica asks the queue once per
// repository: the later requests are duplicates of a task already stored,
// and asking would cost a round trip each.
type dashboards struct {
	queue *asynq.Client
	every time.Duration

	mu     sync.Mutex
	window int64
	asked  map[string]bool // repositories asked for in window
}

func (d *dashboards) ScheduleDashboard(ctx context.Context, repo string, inst int64) error {
	now := time.Now()
	n, key := now.UnixNano()/int64(d.every), strings.ToLower(repo)
	d.mu.Lock()
	if n != d.window {
		d.window, d.asked = n, map[string]bool{}
	}
	asked := d.asked[key]
	d.mu.Unlock()
	if asked {
		return nil
	}
	_, err := d.queue.EnqueueContext(ctx, queue.DashboardTask(queue.Dashboard{Repo: repo, InstallationID: inst}, d.every, now))
	if err != nil && !queue.IsDuplicate(err) {
		return err
	}
	d.mu.Lock()
	if d.window == n {
		d.asked[key] = true
	}
	d.mu.Unlock()
	return nil
}

func withLogger(next http.Handler, log zerolog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(log.WithContext(r.Context())))
	})
}

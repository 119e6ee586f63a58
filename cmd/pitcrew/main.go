// Command pitcrew serves the GitHub App: webhooks in, agent runs out,
// outcomes back on GitHub. See the README for its configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/app"
	"github.com/pitcrew/pitcrew/internal/relay"
	"github.com/pitcrew/pitcrew/internal/weburl"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/sandbox"
)

func main() {
	useRedisLog(zerolog.Nop())
	if code, serve := dispatch(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); !serve {
		os.Exit(code)
	}
	flag.Usage = func() { usage(os.Stderr) }
	configFile := flag.String("config", "", "optional YAML file setting the same keys as the environment")
	flag.Parse()
	log := zerolog.New(os.Stdout).With().Timestamp().Logger()
	cfg, err := LoadConfig(configFiles(*configFile, os.Getenv), os.Getenv)
	if err != nil {
		log.Fatal().Err(err).Msg("pitcrew cannot start")
	}
	cfg.flagFile = *configFile
	if lvl, err := zerolog.ParseLevel(cfg.LogLevel); err == nil {
		log = log.Level(lvl)
	}
	useRedisLog(log)
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		// The intake allocates a body per delivery and little else: collect
		// less often, but never let the heap pass 48 MiB.
		debug.SetGCPercent(300)
		debug.SetMemoryLimit(48 << 20)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Fatal().Err(err).Msg("pitcrew stopped")
	}
}

// run serves until ctx is cancelled, then shuts down in bounded time.
// Without GitHub App credentials it serves the setup pages first, and
// switches to serving webhooks once the app is registered.
func run(ctx context.Context, cfg Config, log zerolog.Logger) error {
	weburl.Set(cfg.GitHubWebURL)
	// The port is bound before anything is started or said: a taken port
	// fails at once, and no URL is printed for a server that never runs.
	ln, err := listen(cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close() // srv.Shutdown closes it too; the second close is harmless
	var handler swapHandler
	var mu sync.Mutex // guards stopApp: the setup callback sets it on its own goroutine
	var stopApp func()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		if stopApp != nil {
			stopApp()
		}
	}()
	if cfg.MissingGitHubApp() {
		handler.set(setupServer(cfg, log, terminal, func(registered Config) error {
			if err := registered.Validate(); err != nil {
				return fmt.Errorf("set the rest of the configuration and restart pitcrew (%v)", err)
			}
			h, stop, err := startApp(ctx, registered, log)
			if err != nil {
				return err
			}
			mu.Lock()
			stopApp = stop
			mu.Unlock()
			handler.set(h)
			return nil
		}))
		log.Warn().Str("url", cfg.PublicURL).Msg("no GitHub App configured: setup mode; open this URL to register pitcrew")
	} else {
		if err := cfg.Validate(); err != nil {
			return err
		}
		h, stop, err := startApp(ctx, cfg, log)
		if err != nil {
			return err
		}
		handler.set(h)
		stopApp = stop
	}

	srv := &http.Server{
		Addr: cfg.Addr, Handler: &handler,
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info().Str("addr", ln.Addr().String()).Str("public_url", cfg.PublicURL).Msg("pitcrew is serving")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// startApp connects everything and starts the workers; stop undoes it.
func startApp(ctx context.Context, cfg Config, log zerolog.Logger) (handler http.Handler, stop func(), err error) {
	var cleanups []func()
	undo := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	defer func() {
		if err != nil {
			undo()
		}
	}()
	rdb, closeRedis, err := openRedis(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	cleanups = append(cleanups, closeRedis)

	cc, err := newClientCreator(cfg)
	if err != nil {
		return nil, nil, err
	}
	slug, err := checkCredentials(ctx, cc)
	if err != nil {
		return nil, nil, err
	}
	log.Info().Str("app", slug).Msg("GitHub accepted the app's credentials")

	sb, err := sandbox.NewClient(sandbox.Config{BaseURL: cfg.RushAPIURL, Org: cfg.RushOrg, APIKey: cfg.RushAPIKey, Agent: cfg.RushAgent})
	if err != nil {
		return nil, nil, err
	}
	env := cfg.SourceEnv()
	for key, route := range app.SourceSecretEnvKeys() {
		if env[key] == "" {
			log.Warn().Msgf("%s is unset: %s refuses every request", key, route)
		}
	}
	sweep, lookBack, reconcile, stale, maxAge, err := cfg.Durations()
	if err != nil {
		return nil, nil, err
	}
	workers, err := strconv.Atoi(cfg.Workers)
	if err != nil || workers < 0 {
		return nil, nil, errors.New("PITCREW_WORKERS must be 0 (take webhooks only) or more")
	}
	pitcrew, err := app.NewApp(app.Options{
		WebhookSecret: cfg.WebhookSecret, RushWebhookSecret: cfg.RushWebhookSecret, AppSlug: slug,
		ClientCreator: cc, Redis: rdb, Sandbox: sb, Logger: log, Concurrency: workers,
		SourceEnv:  env,
		Schedule:   queue.Schedule{SweepEvery: sweep, ReconcileEvery: reconcile},
		StaleAfter: stale, MaxRunAge: maxAge, SweepLookBack: lookBack,
		EmbeddedRedis: !cfg.hasRedis(), StatusToken: cfg.StatusToken,
	})
	if err != nil {
		return nil, nil, err
	}
	cleanups = append(cleanups, pitcrew.Shutdown)
	if cfg.WebhookProxyURL != "" {
		// GitHub posts to the relay channel; pitcrew reads it itself.
		relayCtx, stopRelay := context.WithCancel(ctx)
		go func() {
			r := &relay.Relay{URL: cfg.WebhookProxyURL, Intake: pitcrew.Handler, Path: "/api/github/hook", Log: log.With().Str("component", "relay").Logger()}
			if err := r.Run(relayCtx); err != nil {
				log.Error().Err(err).Msg("stopped reading the webhook relay channel (PITCREW_WEBHOOK_PROXY_URL)")
			}
		}()
		cleanups = append(cleanups, stopRelay)
	}
	if workers > 0 {
		if err := pitcrew.StartWorker(); err != nil {
			return nil, nil, err
		}
	} else {
		log.Info().Msg("PITCREW_WORKERS=0: this replica takes webhooks only; other replicas do the work")
	}
	return pitcrew.Handler, undo, nil
}

// swapHandler lets the server switch from the setup pages to the app
// without a restart.
type swapHandler struct{ h atomic.Pointer[http.Handler] }

func (s *swapHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

// checkCredentials fails fast on a wrong app id or key: it reads the app
// itself with the app's JWT and returns its slug.
func checkCredentials(ctx context.Context, cc githubapp.ClientCreator) (string, error) {
	client, err := cc.NewAppClient()
	if err != nil {
		return "", fmt.Errorf("GitHub App credentials: %w", err)
	}
	app, _, err := client.Apps.Get(ctx, "")
	var answered *gogithub.ErrorResponse
	switch {
	case errors.As(err, &answered):
		return "", fmt.Errorf("GitHub rejected the app's credentials (check GITHUB_APP_INTEGRATION_ID and the private key): %w", err)
	case err != nil:
		// No answer at all: DNS, a refused connection, a proxy; not the credentials.
		return "", fmt.Errorf("GitHub could not be reached to check the app's credentials (check GITHUB_V3_API_URL and the network): %w", err)
	}
	return app.GetSlug(), nil
}

// healthcheck is the container's health probe (the image has no shell or
// curl): it asks the local server's /healthz and exits 0 when it answers.
// healthcheckCommand implements `pitcrew healthcheck [-config FILE]`.
func healthcheckCommand(args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "optional YAML file setting the same keys as the environment")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := LoadConfig(configFiles(*config, os.Getenv), os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, "unhealthy:", err)
		return 1
	}
	return healthcheck(cfg.Addr)
}

func healthcheck(addr string) int {
	if addr == "" {
		addr = defaults["PITCREW_ADDR"]
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	client := http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get("http://" + addr + "/healthz")
	if err != nil {
		fmt.Fprintln(os.Stderr, "unhealthy:", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "unhealthy: /healthz answered", resp.Status)
		return 1
	}
	return 0
}

func parseAppID(s string) (int64, error) {
	if strings.TrimSpace(s) == "" {
		return 0, errors.New("GITHUB_APP_INTEGRATION_ID is unset")
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errors.New("GITHUB_APP_INTEGRATION_ID must be a number")
	}
	return id, nil
}

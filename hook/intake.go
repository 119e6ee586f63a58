package hook

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/durable"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/queue"
)

// enqueueTimeout bounds the wait for Redis while GitHub waits for us.
const enqueueTimeout = 2 * time.Second

// MaxGitHubBody bounds a webhook body (see queue.MaxDeliveryBody).
const MaxGitHubBody = queue.MaxDeliveryBody

// Intake answers the GitHub webhook route. It checks the delivery's
// headers, its signature (with go-github's check) and that the body is a
// JSON object, then stores it on the durable queue, with the delivery id as
// task id so a redelivery is refused. The 2xx goes out only once Redis has
// the delivery.
//
// It does what go-githubapp's event dispatcher does, without the copies of
// the body that reading through it costs (go-github's io.ReadAll, in
// growing chunks and then whole): the body is read once, into a pooled
// buffer, and compressed for the queue into another (queue.AppendDelivery).
type Intake struct {
	Secret    []byte
	Queue     *asynq.Client
	Inspector *asynq.Inspector
	Events    []string // the events the worker has handlers for
	// Ignored reports, from a verified body alone, a delivery its handler
	// would ignore: answered 200 and not stored, so that what pitcrew
	// itself writes (every status comment edit is an issue_comment event)
	// does not come back as queued work. It reads the body through
	// body.Scan, whose one pass the intake's own check then reuses.
	Ignored func(event string, body *Body) bool
	// Replicated, when set, holds each 2xx until a replica has what was
	// stored (none when the primary has no replica).
	Replicated *durable.Waiter
	Metrics    *metrics.Metrics
	// Unverified bounds what bodies not yet verified may hold.
	Unverified *Budget
}

// errBadPayload is a delivery whose body is not a JSON object.
var errBadPayload = errors.New("payload is not a JSON object")

// ServeHTTP takes one delivery: 202 once stored, 200 for an event pitcrew
// does not handle, and an error status (see onIntakeError) otherwise.
func (in *Intake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	event, id := r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
	// Until the signature holds and the event is one pitcrew handles, the
	// header is anyone's text: it must not become a metric label.
	label := "unverified"
	refuse := func(cause error) {
		in.Metrics.Deliveries.WithLabelValues(label, "rejected").Inc()
		onIntakeError(w, r, githubapp.ValidationError{EventType: event, DeliveryID: id, Cause: cause})
	}
	switch {
	case !framable(event):
		refuse(errors.New("missing or invalid X-GitHub-Event"))
		return
	case !framable(id):
		refuse(errors.New("missing or invalid X-GitHub-Delivery"))
		return
	}
	d, err := readDelivery(r, in.Unverified)
	defer d.release()
	if errors.Is(err, errIntakeBusy) {
		in.Metrics.Deliveries.WithLabelValues(label, "busy").Inc()
		refuseBusy(w)
		return
	}
	if err != nil {
		refuse(err)
		return
	}
	if err := d.verify(r.Header.Get("Content-Type"), r.Header.Get("X-Hub-Signature-256"), in.Secret); err != nil {
		refuse(err)
		return
	}
	body := bodies.Get().(*Body)
	defer func() { body.reset(nil); bodies.Put(body) }()
	body.reset(d.body())
	if !slices.Contains(in.Events, event) || in.Ignored != nil && in.Ignored(event, body) {
		w.WriteHeader(http.StatusOK)
		return
	}
	label = event
	// Only validity is checked here (a full decode would cost more than
	// everything else together); the worker decodes what each event needs.
	if !body.Scan(nil).Object() {
		refuse(errBadPayload)
		return
	}
	payload := payloads.Get().(*[]byte)
	defer putPayload(payload)
	*payload = queue.AppendDelivery((*payload)[:0], event, id, d.body())
	if err := in.store(r.Context(), event, id, *payload); err != nil {
		in.Metrics.Deliveries.WithLabelValues(event, "error").Inc()
		onIntakeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// bodies keeps each Body's View (a few hundred bytes) off the heap.
var bodies = sync.Pool{New: func() any { return new(Body) }}

// payloads hold the tasks' payloads until asynq has encoded its copy.
var payloads = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

func putPayload(b *[]byte) {
	if cap(*b) <= maxPooledBuffer {
		payloads.Put(b)
	}
}

// framable reports whether a header value can head a queued delivery,
// whose framing ends each value with a newline.
func framable(v string) bool {
	return v != "" && len(v) <= 100 && !strings.ContainsAny(v, "\n\r")
}

// store puts a delivery's payload (queue.AppendDelivery) on the queue.
func (in *Intake) store(ctx context.Context, event, id string, payload []byte) error {
	// GitHub waits 10 s for the answer: better a quick 503 (the delivery
	// shows as failed and the sweeper has it redelivered) than a late 2xx.
	ctx, cancel := context.WithTimeout(ctx, enqueueTimeout)
	defer cancel()
	_, err := in.Queue.EnqueueContext(ctx, queue.DeliveryTask(id, payload))
	if queue.IsDuplicate(err) && in.dropIfArchived(id) {
		// The earlier copy ran out of retries; a redelivery is how an
		// operator asks for another go.
		_, err = in.Queue.EnqueueContext(ctx, queue.DeliveryTask(id, payload))
	}
	if err != nil && !queue.IsDuplicate(err) {
		return err
	}
	// A duplicate too: the first copy's answer may have been a 503. Counted
	// once its answer is known: a delivery refused here counts as an error.
	if werr := in.Replicated.Wait(ctx, queue.DeliveryKey(id)); werr != nil {
		return werr
	}
	if queue.IsDuplicate(err) {
		in.Metrics.Deliveries.WithLabelValues(event, "duplicate").Inc()
		zerolog.Ctx(ctx).Info().Str(githubapp.LogKeyDeliveryID, id).Msg("delivery already stored; ignoring the redelivery")
		return nil
	}
	in.Metrics.Deliveries.WithLabelValues(event, "queued").Inc()
	return nil
}

// onIntakeError answers GitHub when a delivery was not stored: 413 for a
// body over the limit, 401 for a bad signature, 400 for a malformed
// delivery, 503 when Redis could not take it (GitHub shows the delivery as
// failed, and it can be redelivered).
func onIntakeError(w http.ResponseWriter, r *http.Request, err error) {
	log := zerolog.Ctx(r.Context()).With().Str(githubapp.LogKeyEventType, r.Header.Get("X-GitHub-Event")).
		Str(githubapp.LogKeyDeliveryID, r.Header.Get("X-GitHub-Delivery")).Logger()
	var ve githubapp.ValidationError
	var tooBig *http.MaxBytesError
	isValidation := errors.As(err, &ve)
	switch {
	case isValidation && errors.As(ve.Cause, &tooBig):
		http.Error(w, "payload too large", http.StatusRequestEntityTooLarge)
	case isValidation && strings.Contains(ve.Cause.Error(), "signature"):
		log.Warn().Err(err).Msg("rejected a delivery with a bad signature")
		http.Error(w, "invalid signature", http.StatusUnauthorized)
	case isValidation:
		log.Warn().Err(err).Msg("rejected an invalid delivery")
		http.Error(w, "invalid delivery: "+ve.Cause.Error(), http.StatusBadRequest)
	default:
		log.Error().Err(err).Msg("could not store delivery")
		http.Error(w, "could not store the delivery; please redeliver", http.StatusServiceUnavailable)
	}
}

// dropIfArchived deletes the stored copy of a delivery whose task gave up
// (archived), and reports whether it did.
func (in *Intake) dropIfArchived(deliveryID string) bool {
	info, err := in.Inspector.GetTaskInfo(queue.QueueGitHub, "gh:"+deliveryID)
	if err != nil || info.State != asynq.TaskStateArchived {
		return false
	}
	return in.Inspector.DeleteTask(queue.QueueGitHub, "gh:"+deliveryID) == nil
}

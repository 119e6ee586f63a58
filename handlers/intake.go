package handlers

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"
)

// enqueueTimeout bounds the wait for Redis while GitHub waits for us.
const enqueueTimeout = 2 * time.Second

// MaxGitHubBody bounds a webhook body. GitHub caps payloads at 25 MB, but
// none of the events pitcrew reads comes near a few hundred KB.
const MaxGitHubBody = 5 << 20

// Intake is the go-githubapp event handler on the webhook route. It runs
// inside the HTTP request, after the signature check: it checks the body is
// JSON and stores the delivery on the durable queue, with the delivery id
// as task id so a redelivery is refused. The 2xx goes out only once Redis
// has the delivery.
type Intake struct {
	Queue     *asynq.Client
	Inspector *asynq.Inspector
	Events    []string
	Metrics   *Metrics
}

// Handles lists the events the worker has handlers for.
func (in *Intake) Handles() []string { return in.Events }

// errBadPayload is a delivery whose body is not a JSON object.
var errBadPayload = errors.New("payload is not a JSON object")

// Handle stores one delivery.
func (in *Intake) Handle(ctx context.Context, event, deliveryID string, payload []byte) error {
	if deliveryID == "" || strings.ContainsAny(deliveryID, "\n\r") || len(deliveryID) > 100 {
		in.Metrics.Deliveries.WithLabelValues(event, "rejected").Inc()
		return githubapp.ValidationError{EventType: event, DeliveryID: deliveryID, Cause: errors.New("missing or invalid X-GitHub-Delivery")}
	}
	// Only validity is checked here (a full decode costs a fifth of the
	// intake's CPU); the worker decodes what each event needs.
	if !isJSONObject(payload) {
		in.Metrics.Deliveries.WithLabelValues(event, "rejected").Inc()
		return githubapp.ValidationError{EventType: event, DeliveryID: deliveryID, Cause: errBadPayload}
	}
	// GitHub waits 10 s for the answer: better a quick 503 (the delivery
	// shows as failed and the sweeper has it redelivered) than a late 2xx.
	ctx, cancel := context.WithTimeout(ctx, enqueueTimeout)
	defer cancel()
	_, err := in.Queue.EnqueueContext(ctx, deliveryTask(event, deliveryID, payload))
	if isDuplicate(err) && in.dropIfArchived(deliveryID) {
		// The earlier copy ran out of retries; a redelivery is how an
		// operator asks for another go.
		_, err = in.Queue.EnqueueContext(ctx, deliveryTask(event, deliveryID, payload))
	}
	switch {
	case isDuplicate(err):
		in.Metrics.Deliveries.WithLabelValues(event, "duplicate").Inc()
		zerolog.Ctx(ctx).Info().Msg("delivery already stored; ignoring the redelivery")
		return nil
	case err != nil:
		in.Metrics.Deliveries.WithLabelValues(event, "error").Inc()
		return err
	}
	in.Metrics.Deliveries.WithLabelValues(event, "queued").Inc()
	return nil
}

// onIntakeError answers GitHub when a delivery was not stored: 413 for a
// body over the limit, 401 for a bad signature, 400 for a malformed
// delivery, 503 when Redis could not take it (GitHub shows the delivery as
// failed, and it can be redelivered).
func onIntakeError(w http.ResponseWriter, r *http.Request, err error) {
	log := zerolog.Ctx(r.Context())
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

// onIntakeResponse answers 202 for stored deliveries and 200 for events
// pitcrew does not handle.
func onIntakeResponse(w http.ResponseWriter, r *http.Request, event string, handled bool) {
	if handled {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// dropIfArchived deletes the stored copy of a delivery whose task gave up
// (archived), and reports whether it did.
func (in *Intake) dropIfArchived(deliveryID string) bool {
	info, err := in.Inspector.GetTaskInfo(QueueGitHub, "gh:"+deliveryID)
	if err != nil || info.State != asynq.TaskStateArchived {
		return false
	}
	return in.Inspector.DeleteTask(QueueGitHub, "gh:"+deliveryID) == nil
}

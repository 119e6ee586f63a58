package queue

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hibiken/asynq"
	"github.com/klauspost/compress/s2"
)

// MaxDeliveryBody bounds a delivery's body, stored or decoded. GitHub caps
// payloads at 25 MB, but none of the events pitcrew reads comes near a
// few hundred KB.
const MaxDeliveryBody = 5 << 20

// A delivery task's payload is "event\ndelivery-id\n" then the body:
// compressedMark followed by the JSON as an S2 block (TaskGitHubDelivery),
// or the JSON itself, as replicas before the compression stored it
// (TaskGitHubDeliveryJSON). No JSON body starts with a NUL byte, so
// DecodeDelivery reads either.
//
// Compressing costs the intake about 11 µs for a 14 KB delivery and saves
// Redis more than three times that, since Redis copies the task several
// times on its way into the hash (docs/performance.md); the retained
// deliveries also take a fifth of the memory.
const compressedMark = 0

// AppendDelivery appends the payload of a delivery task for event, id and
// a JSON body to dst, the body compressed; decoded by DecodeDelivery.
func AppendDelivery(dst []byte, event, id string, body []byte) []byte {
	dst = append(append(append(append(dst, event...), '\n'), id...), '\n', compressedMark)
	n := len(dst)
	dst = slices.Grow(dst, s2.MaxEncodedLen(len(body)))
	return dst[:n+len(s2.Encode(dst[n:cap(dst)], body))]
}

// DecodeDelivery splits a delivery task's payload into its event, its id
// and its JSON body. A compressed body is decoded into a new slice, at most
// MaxDeliveryBody long; a body stored as JSON is returned without a copy.
func DecodeDelivery(p []byte) (event, id string, body []byte, err error) {
	e, rest, ok1 := bytes.Cut(p, []byte{'\n'})
	d, body, ok2 := bytes.Cut(rest, []byte{'\n'})
	if !ok1 || !ok2 || len(e) == 0 || len(d) == 0 {
		return "", "", nil, errors.New("malformed delivery task")
	}
	if len(body) > 0 && body[0] == compressedMark {
		if body, err = decompress(body[1:]); err != nil {
			return "", "", nil, err
		}
	}
	return string(e), string(d), body, nil
}

func decompress(block []byte) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, fmt.Errorf("delivery task: %w", err)
	}
	if n > MaxDeliveryBody {
		return nil, fmt.Errorf("delivery task: a body of %d bytes is over the bound of %d", n, MaxDeliveryBody)
	}
	body, err := s2.Decode(make([]byte, n), block)
	if err != nil {
		return nil, fmt.Errorf("delivery task: %w", err)
	}
	return body, nil
}

// DeliveryTask is the queue's task for a delivery's payload (AppendDelivery).
func DeliveryTask(id string, payload []byte) *asynq.Task {
	return asynq.NewTask(TaskGitHubDelivery, payload,
		asynq.TaskID(deliveryTaskID(id)), asynq.Queue(QueueGitHub), asynq.MaxRetry(MaxRetry),
		asynq.Retention(DeliveryRetention), asynq.Timeout(5*time.Minute))
}

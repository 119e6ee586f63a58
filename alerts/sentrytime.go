package alerts

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// How far a Sentry event alert's times may be from pitcrew's clock
// (SentryAlert.Fresh).
const (
	// SentryMaxEventAge bounds the age of the event an alert carries. An
	// issue alert fires as Sentry takes the event in (rules that count
	// events, a few minutes on), so the day is room for Sentry's queues
	// running late, not for the alert.
	SentryMaxEventAge = 24 * time.Hour
	// SentryMaxHookAge bounds the age of Sentry-Hook-Timestamp, which
	// Sentry stamps as it sends each attempt: the hour is room for clocks
	// apart.
	SentryMaxHookAge = time.Hour
	// SentryMaxSkew bounds how far ahead of pitcrew's clock either time
	// may be.
	SentryMaxSkew = 5 * time.Minute
)

// Fresh reports, as an error, an alert too old (or too far ahead) to act
// on at now. Sentry's signature covers the body only, so a captured body
// passes it whenever it is sent again, and its Sentry-Hook-Timestamp
// (hookTimestamp, "" when absent) is the sender's word: checked when
// present, it stops only a replay that leaves it as captured. What bounds
// a replay is the signed event's own time: when Sentry received it, else
// when it happened. A body with neither is refused: nothing would tell a
// replay of it years on.
func (a SentryAlert) Fresh(hookTimestamp string, now time.Time) error {
	if hookTimestamp != "" {
		sent := unixTime(strings.TrimSpace(hookTimestamp))
		if sent.IsZero() {
			return errors.New("Sentry-Hook-Timestamp is not a Unix time")
		}
		if err := within("Sentry-Hook-Timestamp", sent, now, SentryMaxHookAge); err != nil {
			return err
		}
	}
	switch {
	case !a.Received.IsZero():
		return within("the event's received time", a.Received, now, SentryMaxEventAge)
	case !a.Happened.IsZero():
		return within("the event's time", a.Happened, now, SentryMaxEventAge)
	}
	return errors.New("the event has no received time, timestamp or datetime")
}

// within checks that t is at most maxAge before now and SentryMaxSkew after.
func within(what string, t, now time.Time, maxAge time.Duration) error {
	switch d := now.Sub(t); {
	case d > maxAge:
		return fmt.Errorf("%s is %s old, over the %s allowed", what, d.Round(time.Second), maxAge)
	case d < -SentryMaxSkew:
		return fmt.Errorf("%s is %s ahead of this server's clock, over the %s allowed", what, (-d).Round(time.Second), SentryMaxSkew)
	}
	return nil
}

// sentryTime reads an event's received or timestamp field: Unix seconds
// (a JSON number, or a string of one) or an RFC 3339 string; zero for
// anything else or a year outside 2000–2199.
func sentryTime(raw json.RawMessage) time.Time {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return plausible(t)
		}
		return unixTime(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return unixTime(n.String())
	}
	return time.Time{}
}

// unixTime reads Unix seconds, with a fraction or not; zero for anything
// else or a year outside 2000–2199.
func unixTime(s string) time.Time {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e11 {
		return time.Time{}
	}
	sec, frac := math.Modf(f)
	return plausible(time.Unix(int64(sec), int64(frac*1e9)))
}

func plausible(t time.Time) time.Time {
	if t.Year() < 2000 || t.Year() >= 2200 {
		return time.Time{}
	}
	return t.UTC()
}

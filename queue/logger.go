package queue

import (
	"fmt"

	"github.com/rs/zerolog"
)

// Logger sends asynq's own messages to zerolog.
type Logger struct{ l zerolog.Logger }

// NewLogger is asynq's logger writing to l.
func NewLogger(l zerolog.Logger) Logger { return Logger{l} }

func (a Logger) Debug(args ...any) {
	a.l.Debug().Str("component", "queue").Msg(fmt.Sprint(args...))
}
func (a Logger) Info(args ...any) { a.l.Info().Str("component", "queue").Msg(fmt.Sprint(args...)) }
func (a Logger) Warn(args ...any) { a.l.Warn().Str("component", "queue").Msg(fmt.Sprint(args...)) }
func (a Logger) Error(args ...any) {
	a.l.Error().Str("component", "queue").Msg(fmt.Sprint(args...))
}
func (a Logger) Fatal(args ...any) {
	a.l.Fatal().Str("component", "queue").Msg(fmt.Sprint(args...))
}

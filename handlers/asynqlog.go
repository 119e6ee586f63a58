package handlers

import (
	"fmt"

	"github.com/rs/zerolog"
)

// asynqLogger sends asynq's own messages to zerolog.
type asynqLogger struct{ l zerolog.Logger }

func (a asynqLogger) Debug(args ...any) {
	a.l.Debug().Str("component", "queue").Msg(fmt.Sprint(args...))
}
func (a asynqLogger) Info(args ...any) { a.l.Info().Str("component", "queue").Msg(fmt.Sprint(args...)) }
func (a asynqLogger) Warn(args ...any) { a.l.Warn().Str("component", "queue").Msg(fmt.Sprint(args...)) }
func (a asynqLogger) Error(args ...any) {
	a.l.Error().Str("component", "queue").Msg(fmt.Sprint(args...))
}
func (a asynqLogger) Fatal(args ...any) {
	a.l.Fatal().Str("component", "queue").Msg(fmt.Sprint(args...))
}

package testenv

import (
	"context"
	"sync"

	"github.com/pitcrew/pitcrew/sandbox"
)

// Sessions is a struct fake of the sandbox for table tests without HTTP:
// it records each session started (its prompt, by key) and each follow-up
// sent (once per key), and answers every read with nothing.
type Sessions struct {
	mu       sync.Mutex
	Prompts  map[string]string
	Messages map[string][]string // by session: the follow-ups, once per key
	keys     map[string]bool
}

// Message records a follow-up to session id, once per key.
func (s *Sessions) Message(_ context.Context, id, key, message string) (sandbox.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Messages == nil {
		s.Messages, s.keys = map[string][]string{}, map[string]bool{}
	}
	if !s.keys[key] {
		s.keys[key] = true
		s.Messages[id] = append(s.Messages[id], message)
	}
	return sandbox.Session{ID: id, Status: sandbox.StatusRunning}, nil
}

// Start records a session started with prompt under key.
func (s *Sessions) Start(_ context.Context, key, prompt, _ string, _ []string) (sandbox.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Prompts == nil {
		s.Prompts = map[string]string{}
	}
	s.Prompts[key] = prompt
	return sandbox.Session{ID: "ses_" + key, Status: sandbox.StatusRunning}, nil
}

// Started is how many sessions were started.
func (s *Sessions) Started() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.Prompts)
}

// Get answers an empty session.
func (s *Sessions) Get(context.Context, string) (sandbox.Session, error) {
	return sandbox.Session{}, nil
}

// Download answers no artifact.
func (s *Sessions) Download(context.Context, string) ([]byte, error) { return nil, nil }

package app

import (
	"github.com/pitcrew/pitcrew/handlers"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
)

// What the commands read of the registered jobs, so that only the wiring
// imports the handlers.

// ConfigSchema is .github/pitcrew.yml as the registered jobs make it.
func ConfigSchema() repoconfig.Schema { return handlers.ConfigSchema() }

// SourceEnvKeys are the variables every outside source reads.
func SourceEnvKeys() []string { return handlers.SourceEnvKeys() }

// SourceSecretEnvKeys are the outside sources' secret variables, each
// with the route it guards.
func SourceSecretEnvKeys() map[string]string { return handlers.SourceSecretEnvKeys() }

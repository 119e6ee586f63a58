package runs

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Each /pitcrew command is acted on once, however often GitHub delivers
// it: the handler acts under the command's lock, and marks it done before
// letting go. A command is named by its source: "comment:<id>" or
// "review:<id>" (the two id spaces are GitHub's own).

// CommandLock is the name of the lock a command of repo is acted on under.
func CommandLock(repo, source string) string {
	return fmt.Sprintf("command:%s:%s", strings.ToLower(repo), source)
}

// CommandDone reports whether the command from source was acted on.
func (l *Ledger) CommandDone(ctx context.Context, repo, source string) (bool, error) {
	n, err := l.rdb.Exists(ctx, l.prefix+CommandLock(repo, source)).Result()
	return n > 0, err
}

// MarkCommandDone records that the command from source was acted on.
func (l *Ledger) MarkCommandDone(ctx context.Context, repo, source string) error {
	return l.rdb.Set(ctx, l.prefix+CommandLock(repo, source), 1, Retention).Err()
}

// FirstRefusal reports whether login was not yet told today, on issue
// number of repo, that only writers give commands; it records that they
// are now.
func (l *Ledger) FirstRefusal(ctx context.Context, repo string, number int, login string) (bool, error) {
	key := fmt.Sprintf("%srefused:%s#%d:%s", l.prefix, strings.ToLower(repo), number, strings.ToLower(login))
	return l.rdb.SetNX(ctx, key, 1, 24*time.Hour).Result()
}

// FirstTime reports whether name was not recorded in the last ttl, and
// records it: once across replicas and redeliveries.
func (l *Ledger) FirstTime(ctx context.Context, name string, ttl time.Duration) (bool, error) {
	return l.rdb.SetNX(ctx, l.prefix+"once:"+name, 1, ttl).Result()
}

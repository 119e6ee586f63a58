package runs

import (
	"context"
	"fmt"
	"strings"
)

// Each /pitcrew command (a comment or review id) is acted on once, however
// often GitHub delivers it: the handler acts under the command's lock, and
// marks it done before letting go.

func (l *Ledger) commandKey(repo string, id int64) string {
	return fmt.Sprintf("%scommand:%s:%d", l.prefix, strings.ToLower(repo), id)
}

// CommandLock is the name of the lock a command of repo is acted on under.
func CommandLock(repo string, id int64) string {
	return fmt.Sprintf("command:%s:%d", strings.ToLower(repo), id)
}

// CommandDone reports whether command id of repo was acted on.
func (l *Ledger) CommandDone(ctx context.Context, repo string, id int64) (bool, error) {
	n, err := l.rdb.Exists(ctx, l.commandKey(repo, id)).Result()
	return n > 0, err
}

// MarkCommandDone records that command id of repo was acted on.
func (l *Ledger) MarkCommandDone(ctx context.Context, repo string, id int64) error {
	return l.rdb.Set(ctx, l.commandKey(repo, id), 1, Retention).Err()
}

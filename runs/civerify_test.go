package runs

import (
	"context"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// A repository gets its daily number of verifications in CI, counted
// apart from its issues, and no more.
func TestVerificationsInCIHaveADailyNumber(t *testing.T) {
	l, ctx := NewLedger(testenv.Redis(t)), context.Background()
	for i := 1; i <= 3; i++ {
		ok, err := l.ReserveCIVerify(ctx, "hexpm/hexpm", 2)
		if err != nil || ok != (i <= 2) {
			t.Fatalf("verification %d: %v %v", i, ok, err)
		}
	}
	if ok, _ := l.ReserveCIVerify(ctx, "hexpm/other", 2); !ok {
		t.Fatal("another repository's number was taken")
	}
	if n, _ := l.IssuesOpened(ctx, "hexpm/hexpm"); n != 0 {
		t.Fatalf("%d issues counted", n)
	}
}

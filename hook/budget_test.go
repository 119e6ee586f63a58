package hook

import (
	"testing"
)

func TestByteBudgetKeepsHalfForSmallBodies(t *testing.T) {
	const small, large = 64 << 10, 4 << 20
	b := &Budget{limit: 16 << 20}
	for i, tc := range []struct {
		n, total int64
		want     bool
	}{
		{large, large, true},                    // 4 MiB of the 8 large bodies may hold
		{large, large, true},                    // 8 MiB
		{large, large, false},                   // past half: refused
		{small, small, true},                    // a small body still fits
		{7 << 20, small, true},                  // small bodies may fill the rest (15 MiB + 64 KiB)
		{1 << 20, small, false},                 // but not past the whole
		{small + 1, maxPooledBuffer + 1, false}, // a body growing past the pool size counts as large
	} {
		if got := b.take(tc.n, tc.total); got != tc.want {
			t.Fatalf("step %d: take(%d, %d) = %v, want %v (used %d)", i, tc.n, tc.total, got, tc.want, b.used.Load())
		}
	}
	b.give(b.used.Load())
	if b.used.Load() != 0 {
		t.Fatal("budget not given back")
	}
}

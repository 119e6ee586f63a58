package evidence

import (
	"math/rand"
	"slices"
	"testing"
)

// holding finds every span that holds a call, latest start first, as a
// scan of all of them does; any agrees with it.
func TestSpanIndexFindsWhatAScanFinds(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		spans := make([][2]int, r.Intn(30))
		for i := range spans {
			a := r.Intn(60)
			spans[i] = [2]int{a, a + r.Intn(20)}
		}
		x := newSpanIndex(spans)
		for q := 0; q < 50; q++ {
			a := r.Intn(70)
			b := a + r.Intn(10)
			var got, want []int
			x.holding(a, b, func(i int) bool { got = append(got, i); return true })
			for _, i := range x.order {
				if spans[i][0] <= a && b <= spans[i][1] {
					want = append(want, i)
				}
			}
			slices.Reverse(want)
			if !slices.Equal(got, want) {
				t.Fatalf("spans %v, [%d %d]: holding gave %v, a scan %v", spans, a, b, got, want)
			}
			if x.any(a, b) != (len(want) > 0) {
				t.Fatalf("spans %v, [%d %d]: any = %v, a scan found %v", spans, a, b, x.any(a, b), want)
			}
		}
	}
}

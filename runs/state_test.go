package runs

import "testing"

func TestStateMachine(t *testing.T) {
	all := []State{Queued, Started, Completed, NotReproduced, Failed}
	allowed := map[[2]State]bool{
		{Queued, Started}: true, {Queued, Failed}: true,
		{Started, Completed}: true, {Started, NotReproduced}: true, {Started, Failed}: true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := CanMove(from, to); got != allowed[[2]State{from, to}] {
				t.Errorf("CanMove(%s, %s) = %v", from, to, got)
			}
		}
		if from.Live() == from.Terminal() {
			t.Errorf("%s is both or neither live and terminal", from)
		}
	}
	if Failed.HoldsCooldown() || !Completed.HoldsCooldown() || !NotReproduced.HoldsCooldown() {
		t.Error("cooldown rules wrong")
	}
}

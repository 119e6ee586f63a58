package publish

import (
	"strings"
	"testing"
)

func TestASparklineDrawsEachDay(t *testing.T) {
	svg := string(sparkline([]int64{0, 1, 4, 0}))
	if strings.Count(svg, "<rect") != 4 || !strings.Contains(svg, `<rect x="8" y="0" width="3" height="20" fill="#cf222e"/>`) ||
		!strings.Contains(svg, `<rect x="4" y="15" width="3" height="5"`) || !strings.Contains(svg, `<rect x="0" y="19" width="3" height="1" fill="#d0d7de"/>`) {
		t.Fatal(svg)
	}
}

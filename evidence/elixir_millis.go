package evidence

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// A wait's time read from its expression, in milliseconds.

// Infinity is how :infinity compares as a timeout.
const Infinity = math.MaxInt64

var (
	intLit  = regexp.MustCompile(`^[0-9][0-9_]*$`)
	timerFn = regexp.MustCompile(`^:timer\.(seconds|minutes|hours)\((.+)\)$`)
)

// millis reads a timeout expression in milliseconds: integers (1_000),
// sums and products (@interval + 10, 5 * 1000), :timer.seconds, minutes
// and hours, :infinity, and module attributes the file defines. ok is
// false for anything else.
func (c change) millis(expr string) (int64, bool) {
	return c.millisDepth(expr, 0)
}

func (c change) millisDepth(e string, depth int) (int64, bool) {
	if depth > 4 {
		return 0, false
	}
	e = strings.TrimSpace(e)
	if strings.HasPrefix(e, "(") && strings.HasSuffix(e, ")") {
		e = strings.TrimSpace(e[1 : len(e)-1])
	}
	switch {
	case e == ":infinity":
		return Infinity, true
	case intLit.MatchString(e):
		n, err := strconv.ParseInt(strings.ReplaceAll(e, "_", ""), 10, 64)
		return n, err == nil
	case strings.HasPrefix(e, "@") && !strings.ContainsAny(e, " *"):
		v, ok := c.attrs[strings.TrimPrefix(e, "@")]
		if !ok {
			return 0, false
		}
		return c.millisDepth(v, depth+1)
	}
	if m := settingDefault.FindStringSubmatch(e); m != nil {
		return c.millisDepth(m[1], depth+1) // the value where nothing is set
	}
	if m := timerFn.FindStringSubmatch(e); m != nil {
		n, ok := c.millisDepth(m[2], depth+1)
		unit := map[string]int64{"seconds": 1000, "minutes": 60_000, "hours": 3_600_000}[m[1]]
		if !ok || n > math.MaxInt64/unit {
			return 0, false
		}
		return n * unit, true
	}
	if a, b, ok := cutTop(e, '+'); ok { // @interval + 10
		x, ok1 := c.millisDepth(a, depth+1)
		y, ok2 := c.millisDepth(b, depth+1)
		if !ok1 || !ok2 || x >= Infinity || y >= Infinity || x > math.MaxInt64-y {
			return 0, false
		}
		return x + y, true
	}
	if a, b, ok := strings.Cut(e, "*"); ok {
		x, ok1 := c.millisDepth(a, depth+1)
		y, ok2 := c.millisDepth(b, depth+1)
		if !ok1 || !ok2 || x != 0 && y > math.MaxInt64/x {
			return 0, false
		}
		return x * y, true
	}
	return 0, false
}

// settingDefault is a setting read with a default, which is the value
// where nothing sets it: Application.compile_env(:app, key, 30_000).
var settingDefault = regexp.MustCompile(`^(?:Application\.(?:compile_env|get_env)\([^,]+,.+|(?:Keyword|Map)\.get\([^,]+,[^,]+),\s*([^,()]+)\)$`)

// ms prints a timeout for a reviewer.
func ms(n int64) string {
	switch n {
	case Infinity:
		return ":infinity"
	case unreadWait:
		return "a time it names"
	}
	return strconv.FormatInt(n, 10) + " ms"
}

// cutTop cuts e around the first op outside brackets and strings.
func cutTop(e string, op byte) (before, after string, found bool) {
	depth := 0
	for i := 0; i < len(e); i++ {
		switch e[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case '"':
			if j := strings.IndexByte(e[i+1:], '"'); j >= 0 {
				i += j + 1
			}
		case op:
			if depth == 0 {
				return e[:i], e[i+1:], true
			}
		}
	}
	return e, "", false
}

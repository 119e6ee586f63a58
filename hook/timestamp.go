package hook

import (
	"encoding/json"
	"reflect"
	"strconv"

	gogithub "github.com/google/go-github/v66/github"
)

// unmarshals reports, for a type whose pointer has UnmarshalJSON, whether
// that takes raw. go-github's Timestamp, in every object of every event,
// is checked without its allocations (a new value, the string of raw, and
// time.Parse's) in the forms GitHub writes.
func unmarshals(t reflect.Type) func(raw []byte) bool {
	if t == reflect.TypeFor[gogithub.Timestamp]() {
		return timestampTakes
	}
	return func(raw []byte) bool { return reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw) == nil }
}

// timestampTakes is (*gogithub.Timestamp).UnmarshalJSON(raw) == nil. That
// takes an integer, else a quoted time.RFC3339 time: for an integer and
// for "2006-01-02T15:04:05Z" with every field in range it answers here,
// and leaves every other form to the method.
func timestampTakes(raw []byte) bool {
	if len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return true
		}
	} else if len(raw) == 22 && raw[0] == '"' && raw[5] == '-' && raw[8] == '-' && raw[11] == 'T' && raw[14] == ':' && raw[17] == ':' &&
		string(raw[20:]) == `Z"` {
		y, mo, d := digits(raw[1:5]), digits(raw[6:8]), digits(raw[9:11])
		h, mi, s := digits(raw[12:14]), digits(raw[15:17]), digits(raw[18:20])
		if y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(mo, y) && h >= 0 && h < 24 && mi >= 0 && mi < 60 && s >= 0 && s < 60 {
			return true
		}
	}
	var ts gogithub.Timestamp
	return ts.UnmarshalJSON(raw) == nil
}

// digits is the decimal number b spells, or -1.
func digits(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

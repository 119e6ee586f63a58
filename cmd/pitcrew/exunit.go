package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/pitcrew/pitcrew/exunit"
)

// exunitCommand implements `pitcrew exunit [FILE]`: it prints, as JSON,
// what the ExUnit log parser reads in a log (standard input without FILE),
// so users can see why a CI log was or was not taken as a flake.
func exunitCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	in := stdin
	switch len(args) {
	case 0:
	case 1:
		f, err := os.Open(args[0])
		if err != nil {
			fmt.Fprintln(stderr, "pitcrew exunit:", err)
			return 1
		}
		defer f.Close()
		in = f
	default:
		fmt.Fprintln(stderr, "usage: pitcrew exunit [FILE]")
		return 2
	}
	rep, err := exunit.ParseLog(in)
	if err != nil {
		fmt.Fprintln(stderr, "pitcrew exunit: reading the log:", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return 1
	}
	return 0
}

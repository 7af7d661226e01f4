package main

import "os"

// color reports whether output to the terminal may be colored: not when
// NO_COLOR is set (https://no-color.org) or stdout is not a terminal.
func (a *app) color() bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
	}
	return isTerminal(a.stdout)
}

var statusColors = map[string]string{
	"ok": "32", "active": "32", "running": "32",
	"warn": "33", "paused": "33", "stopped": "33", "creating": "33",
	"fail": "31", "failed-setup": "31", "missing": "31", "error": "31", "exited": "31",
}

// paint colors a status word for the terminal. Every colored word gets the
// same number of invisible bytes, so tabwriter columns stay aligned.
func (a *app) paint(word string) string {
	c, ok := statusColors[word]
	if !ok || !a.color() {
		return word
	}
	return "\x1b[" + c + "m" + word + "\x1b[0m"
}

package dockercli

import (
	"reflect"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/box"
)

func TestParseStats(t *testing.T) {
	// As docker 20.10 prints them, with a line it cannot have.
	out := "litterbox-app-1a2b3c4d-fix\t0.07%\t1.531MiB / 2GiB\nother\t101.50%\t1.2GiB / 23.4GiB\nbroken line\n\n"
	want := map[string]box.Usage{
		"litterbox-app-1a2b3c4d-fix": {CPU: "0.07%", Memory: "1.53MiB"},
		"other":                      {CPU: "102%", Memory: "1.20GiB"},
	}
	if got := parseStats(out); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

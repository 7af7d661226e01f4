package helper

import "testing"

func BenchmarkZGrep(b *testing.B) {
	for b.Loop() {
		out, err := grep("/tmp/tree38k", "ErrDeadlineExceeded", "*", 5001)
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

func BenchmarkZGlob(b *testing.B) {
	for b.Loop() {
		out, err := glob("/tmp/tree38k", "**/*.s", 5001)
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

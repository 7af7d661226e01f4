package procgroup

import (
	"slices"
	"testing"
)

func TestParseStat(t *testing.T) {
	// A command name may hold spaces and parentheses.
	line := "4242 (a) b (c) S 17 4242 4242 0 -1 4194560 107 0 0 0 0 0 0 0 20 0 1 0 987654 1875968 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	p, ok := ParseStat([]byte(line))
	if !ok || p != (Proc{PID: 4242, PPID: 17, Start: 987654}) {
		t.Fatalf("ParseStat = %+v, %v", p, ok)
	}
	z, ok := ParseStat([]byte("9 (sh) Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0"))
	if !ok || !z.Zombie || z.PPID != 1 || z.Start != 55 {
		t.Fatalf("zombie: %+v, %v", z, ok)
	}
	if st, ok := ParseStat([]byte("1 (litterbox-helper) T 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0")); !ok || !st.Stopped || st.Zombie {
		t.Fatalf("stopped: %+v, %v", st, ok)
	}
	// The CPU time is utime + stime, fields 14 and 15, counted after the
	// command name (what the idle stop sums).
	for stat, want := range map[string]uint64{
		"42 (sh) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 9 9 9 9":      10,
		"7 (a (b) c) R 1 7 7 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 9 9 9 9": 300,
	} {
		if c, ok := ParseStat([]byte(stat)); !ok || c.CPU != want {
			t.Errorf("the CPU of %q is %d (%v), want %d", stat, c.CPU, ok, want)
		}
	}
	for _, bad := range []string{"", "12 sh S 1", "1 (x) S 1", "garbage", "x (sh) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0", "7 (sh) S 1 2 3"} {
		if _, ok := ParseStat([]byte(bad)); ok {
			t.Errorf("ParseStat(%q) accepted", bad)
		}
	}
}

func table(ps ...Proc) Table {
	t := Table{}
	for _, p := range ps {
		t[p.PID] = p
	}
	return t
}

func pids(ps []Proc) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.PID)
	}
	slices.Sort(out)
	return out
}

// The rule over one sandbox's table: PID 1 (init), the call's helper 10, a
// human's shell 20 (another exec, ppid 0) with a child, a service monitor
// 30 with its service, and what the call left.
func TestStrays(t *testing.T) {
	init1 := Proc{PID: 1, PPID: 0, Start: 1}
	helper := Proc{PID: 10, PPID: 0, Start: 100}
	human := Proc{PID: 20, PPID: 0, Start: 50}
	monitor := Proc{PID: 30, PPID: 0, Start: 60}
	service := Proc{PID: 31, PPID: 30, Start: 61}
	before := table(init1, helper, human, monitor, service,
		Proc{PID: 40, PPID: 1, Start: 70}, // a daemon from before the call
	)
	cases := []struct {
		name string
		now  Table
		want []int
		sure bool
	}{
		{"nothing new", before, nil, true},
		{"the command and its child", table(init1, helper, human,
			Proc{PID: 11, PPID: 10, Start: 101}, Proc{PID: 12, PPID: 11, Start: 102}), []int{11, 12}, true},
		{"an escapee under PID 1 (setsid, env -i, double fork)", table(init1, helper,
			Proc{PID: 13, PPID: 1, Start: 103}, Proc{PID: 14, PPID: 13, Start: 104}), []int{13, 14}, true},
		{"a subreaper's orphans stay below it", table(init1, helper,
			Proc{PID: 15, PPID: 1, Start: 105}, Proc{PID: 16, PPID: 15, Start: 106}, Proc{PID: 17, PPID: 16, Start: 107}), []int{15, 16, 17}, true},
		{"the human's children and the service are not the call's", table(init1, helper, human, monitor, service,
			Proc{PID: 21, PPID: 20, Start: 110}, Proc{PID: 22, PPID: 21, Start: 111}, Proc{PID: 32, PPID: 31, Start: 112}), nil, true},
		{"a new exec (another tool) is not the call's", table(init1, helper,
			Proc{PID: 50, PPID: 0, Start: 120}, Proc{PID: 51, PPID: 50, Start: 121}), nil, true},
		{"a process from before is not, a recycled pid is", table(init1, helper,
			Proc{PID: 40, PPID: 1, Start: 70}, Proc{PID: 31, PPID: 1, Start: 130}), []int{31}, true},
		{"zombies are left to be reaped", table(init1, helper,
			Proc{PID: 18, PPID: 1, Start: 108, Zombie: true}), nil, true},
		{"a broken chain asks for another read", table(init1, helper,
			Proc{PID: 19, PPID: 99, Start: 109}), nil, false},
		{"a cycle (reads raced) asks for another read", table(init1, helper,
			Proc{PID: 60, PPID: 61, Start: 140}, Proc{PID: 61, PPID: 60, Start: 141}), nil, false},
	}
	// Outside a sandbox PID 1 adopts the host's orphans: none is the call's.
	if got, _ := Strays(before, table(init1, helper, Proc{PID: 13, PPID: 1, Start: 103}, Proc{PID: 11, PPID: 10, Start: 101}), 10, 0); !slices.Equal(pids(got), []int{11}) {
		t.Errorf("outside a sandbox: Strays = %v, want [11]", pids(got))
	}
	for _, c := range cases {
		got, unsure := Strays(before, c.now, 10, 1)
		if !slices.Equal(pids(got), c.want) || unsure == c.sure {
			t.Errorf("%s: Strays = %v (unsure %v), want %v (unsure %v)", c.name, pids(got), unsure, c.want, !c.sure)
		}
	}
}

func TestDescendants(t *testing.T) {
	tab := table(Proc{PID: 1}, Proc{PID: 5, PPID: 0}, Proc{PID: 6, PPID: 5}, Proc{PID: 7, PPID: 6},
		Proc{PID: 8, PPID: 1}, Proc{PID: 9, PPID: 0}, Proc{PID: 3, PPID: 4}, Proc{PID: 4, PPID: 3})
	if got := pids(Descendants(tab, []int{6, 8}, 9)); !slices.Equal(got, []int{6, 7, 8}) {
		t.Errorf("Descendants = %v, want [6 7 8]", got)
	}
	if got := pids(Descendants(tab, []int{5}, 6)); !slices.Equal(got, []int{5, 7}) {
		t.Errorf("Descendants with self 6 = %v, want [5 7]", got)
	}
}

// A sandbox's call is under an exec whether the engine started it (parent
// pid 0) or the helper's serve did; on a host every chain ends at PID 1.
func TestUnderExec(t *testing.T) {
	init1 := Proc{PID: 1, PPID: 0}
	serve := Proc{PID: 10, PPID: 0}
	act := Proc{PID: 11, PPID: 10}
	shell := Proc{PID: 5, PPID: 1}
	test := Proc{PID: 6, PPID: 5}
	cases := []struct {
		name      string
		t         Table
		self, pp  int
		underExec bool
	}{
		{"an exec's act", table(init1, serve), 10, 0, true},
		{"serve's act", table(init1, serve, act), 11, 10, true},
		{"a host's test", table(init1, shell, test), 6, 5, false},
		{"a chain that breaks", table(init1, act), 11, 10, false},
	}
	for _, c := range cases {
		if got := underExec(c.t, c.self, c.pp); got != c.underExec {
			t.Errorf("%s: underExec %v, want %v", c.name, got, c.underExec)
		}
	}
}

// Command jsonget is the e2e tests' JSON reader, so the suite needs no jq. It
// reads one JSON document from stdin (or, with -l, one per non-empty line) and
// prints the value at each PATH:
//
//	jsonget PATH...         e.g. jsonget .0.status '.*.name' '.#'
//	jsonget -l PATH...      every non-empty line must be a JSON document
//
// A PATH is "." or a list of ".segment": an object key, an array index, "*"
// (every element of an array or every value of an object, in order), "#"
// (length of an array, object or string), "@keys" (sorted keys, space
// separated), "@type" (null, bool, number, string, array, object) or
// "[key=value]" (the elements of an array whose key renders as value).
// Strings print raw, other values as compact JSON, one value per line.
// Exit status: 0, 1 when the input is not JSON or a path does not exist, 2 on
// bad usage.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	args := os.Args[1:]
	lines := false
	if len(args) > 0 && args[0] == "-l" {
		lines, args = true, args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: jsonget [-l] PATH...")
		os.Exit(2)
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail("reading stdin: %v", err)
	}
	var docs [][]byte
	if lines {
		sc := bufio.NewScanner(bytes.NewReader(in))
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
				docs = append(docs, append([]byte(nil), l...))
			}
		}
	} else {
		docs = [][]byte{in}
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for i, d := range docs {
		var v any
		dec := json.NewDecoder(bytes.NewReader(d))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			w.Flush()
			fail("document %d is not JSON: %v: %q", i+1, err, trunc(string(d)))
		}
		if dec.More() {
			w.Flush()
			fail("document %d has trailing data: %q", i+1, trunc(string(d)))
		}
		for _, p := range args {
			vals, err := eval(v, p)
			if err != nil {
				w.Flush()
				fail("%s: %v", p, err)
			}
			for _, x := range vals {
				fmt.Fprintln(w, render(x))
			}
		}
	}
}

func eval(v any, path string) ([]any, error) {
	if path == "." {
		return []any{v}, nil
	}
	if !strings.HasPrefix(path, ".") {
		return nil, fmt.Errorf("a path starts with '.'")
	}
	cur := []any{v}
	for _, seg := range strings.Split(path[1:], ".") {
		var next []any
		for _, x := range cur {
			out, err := step(x, seg)
			if err != nil {
				return nil, err
			}
			next = append(next, out...)
		}
		cur = next
	}
	return cur, nil
}

func step(x any, seg string) ([]any, error) {
	switch seg {
	case "#":
		switch t := x.(type) {
		case []any:
			return []any{len(t)}, nil
		case map[string]any:
			return []any{len(t)}, nil
		case string:
			return []any{len(t)}, nil
		}
		return nil, fmt.Errorf("# of a %s", typeOf(x))
	case "@type":
		return []any{typeOf(x)}, nil
	case "@keys":
		m, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("@keys of a %s", typeOf(x))
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return []any{strings.Join(keys, " ")}, nil
	case "*":
		switch t := x.(type) {
		case []any:
			return t, nil
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			out := make([]any, 0, len(keys))
			for _, k := range keys {
				out = append(out, t[k])
			}
			return out, nil
		}
		return nil, fmt.Errorf("* of a %s", typeOf(x))
	}
	if strings.HasPrefix(seg, "[") && strings.HasSuffix(seg, "]") {
		k, want, ok := strings.Cut(seg[1:len(seg)-1], "=")
		arr, isArr := x.([]any)
		if !ok || !isArr {
			return nil, fmt.Errorf("%s needs key=value and an array, not a %s", seg, typeOf(x))
		}
		var out []any
		for _, e := range arr {
			if m, ok := e.(map[string]any); ok {
				if v, ok := m[k]; ok && render(v) == want {
					out = append(out, e)
				}
			}
		}
		return out, nil
	}
	switch t := x.(type) {
	case map[string]any:
		val, ok := t[seg]
		if !ok {
			return nil, fmt.Errorf("no key %q", seg)
		}
		return []any{val}, nil
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(t) {
			return nil, fmt.Errorf("no index %q in an array of %d", seg, len(t))
		}
		return []any{t[i]}, nil
	}
	return nil, fmt.Errorf("no %q in a %s", seg, typeOf(x))
}

func typeOf(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case json.Number, int:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

func render(x any) string {
	if s, ok := x.(string); ok {
		return s
	}
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "jsonget: "+format+"\n", a...)
	os.Exit(1)
}

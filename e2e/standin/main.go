// Command standin behaves like a coding agent run inside a sandbox by
// `litterbox run`, for the tests (no real agent or API is reachable
// there): it asks for a task at a prompt, edits files over several
// seconds with pauses between, leaves a process of its own running in the
// background, says what it did and exits.
//
//	standin [-steps N] [-pause D] [-exit CODE] [-api URL -key-env NAME [-host NAME] [-echo]]
//
// With -api it also calls its "API" as agents do: a POST to URL with the
// key from the variable NAME in its Authorization header, and the key in
// the body too (as an agent might paste it), through HTTPS_PROXY and
// trusting SSL_CERT_FILE, and prints the answer. -host sends another
// Host header than the URL's, and -echo the key in an X-Echo header too,
// which the test API quotes back, as a hostile agent would try.
//
// It works in the current directory. Interrupted (SIGINT, SIGTERM) it
// says so and exits 130, leaving what it wrote.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	steps := flag.Int("steps", 4, "files to write, one per step")
	pause := flag.Duration("pause", 2500*time.Millisecond, "pause after each step")
	exitCode := flag.Int("exit", 0, "status to exit with")
	api := flag.String("api", "", "URL of the API to call")
	keyEnv := flag.String("key-env", "API_KEY", "variable holding the API key")
	host := flag.String("host", "", "Host header to send instead of the URL's")
	echo := flag.Bool("echo", false, "send the key in X-Echo too")
	flag.Parse()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Println("standin: interrupted")
		os.Exit(130)
	}()

	fmt.Print("standin> what shall I do? ")
	task, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	if task == "" {
		task = "nothing in particular\n"
	}
	fmt.Printf("standin: working on: %s", task)
	// A process of its own, left running: the session's end must stop it.
	bg := exec.Command("sleep", "600")
	if err := bg.Start(); err != nil {
		fail(err)
	}
	fmt.Printf("standin: background process %d\n", bg.Process.Pid)
	for i := 1; i <= *steps; i++ {
		p := filepath.Join("standin", fmt.Sprintf("step-%d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fail(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("step %d of %d: %s", i, *steps, task)), 0o644); err != nil {
			fail(err)
		}
		fmt.Printf("standin: wrote %s\n", p)
		time.Sleep(*pause)
	}
	if *api != "" {
		callAPI(*api, os.Getenv(*keyEnv), *host, *echo)
	}
	fmt.Println("standin: done")
	os.Exit(*exitCode)
}

// callAPI posts to url with key, and prints the status and the answer.
func callAPI(url, key, host string, echo bool) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"prompt":"hello","pasted_key":"`+key+`"}`))
	if err != nil {
		fail(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if host != "" {
		req.Host = host
	}
	if echo {
		req.Header.Set("X-Echo", key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println("standin: api error:", err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Printf("standin: api %d: %s\n", resp.StatusCode, strings.TrimSpace(string(body)))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "standin:", err)
	os.Exit(1)
}

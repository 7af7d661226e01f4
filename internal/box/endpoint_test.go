package box

import "testing"

func TestRemoteHost(t *testing.T) {
	for in, want := range map[string]string{
		"unix:///var/run/docker.sock":    "",
		"tcp://127.0.0.1:2375":           "",
		"tcp://localhost:2375":           "",
		"tcp://[::1]:2375":               "",
		"tcp://build-box:2376":           "build-box",
		"ssh://me@10.0.0.5":              "10.0.0.5",
		"npipe:////./pipe/docker_engine": "",
		"":                               "",
	} {
		if got := RemoteHost(in); got != want {
			t.Errorf("RemoteHost(%q) = %q, want %q", in, got, want)
		}
	}
}
